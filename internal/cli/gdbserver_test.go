package cli_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hilrun/hilrun/internal/cli"
	"github.com/hilrun/hilrun/pkg/testenv"
)

// counterC counts in a global, slowly enough not to hog a shared CPU.
const counterC = `#include <unistd.h>
volatile unsigned long counter;
int main(void) {
	for (;;) {
		counter++;
		usleep(1000);
	}
}
`

// readsThatMustDiffer reads counter twice, 300 ms apart: the values
// differ only when the program ran in between.
const readsThatMustDiffer = `
  - mem_read: true
    symbol: counter
    save: before
  - delay: 300ms
  - mem_read: true
    symbol: counter
    save: after
  - assert: after != before
`

// A program that gdbserver --attach stopped runs through a hilrun run
// whose probe says attach: running, between memory steps and after hilrun
// exits; and a reset that gdbserver cannot do fails in its own words.
func TestGDBServerAttachRunning(t *testing.T) {
	gdbserver := testenv.NeedTool(t, "gdbserver", "apt-get install gdbserver")
	prog := buildC(t, counterC, "-no-pie")
	hilrun := hilrunBinary(t)
	for _, tc := range []struct {
		name  string
		probe string // the probe's settings; %s is gdbserver's address
		flag  string // a --gdb flag's value, %s as above, or ""
		steps string
		code  int
		want  []string
	}{
		{name: "attach running in the sequence", probe: "{gdb: {address: '%s', attach: running}, elf: %q}", steps: readsThatMustDiffer},
		{name: "attach running in --gdb", probe: "{elf: %[2]q}", flag: "q=%s?attach=running", steps: readsThatMustDiffer},
		{name: "reset that gdbserver has no command for", probe: "{elf: %[2]q}", flag: "q=%s?attach=running",
			steps: "\n  - reset: halt\n", code: cli.ExitFailed,
			want: []string{`reset with monitor "reset halt": the target refused (E01); the stub printed: Unknown monitor command.`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pid := startStopped(t, prog)
			addr, gsEnded := attachGDBServer(t, gdbserver, pid)
			dir := t.TempDir()
			seq := writeFile(t, dir, "seq.yaml", "probes:\n  q: "+fmt.Sprintf(tc.probe, addr, prog)+"\nsteps:"+tc.steps)
			args := []string{"run", seq}
			if tc.flag != "" {
				args = append(args, "--gdb", fmt.Sprintf(tc.flag, addr))
			}
			var out bytes.Buffer
			cmd := exec.Command(hilrun, args...)
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			if code := cmd.ProcessState.ExitCode(); code != tc.code {
				t.Fatalf("hilrun exited with %d (%v), want %d:\n%s", code, err, tc.code, out.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("the output does not say %q:\n%s", w, out.String())
				}
			}
			// hilrun detached: gdbserver, attached to one program, ends.
			select {
			case <-gsEnded:
			case <-time.After(10 * time.Second):
				t.Fatalf("gdbserver still runs 10s after hilrun exited: hilrun did not detach\n%s", out.String())
			}
			if st := procState(t, pid); st == "t" || st == "T" {
				t.Errorf("after hilrun exited the program is stopped (state %s):\n%s", st, out.String())
			}
		})
	}
}

// A PIE's symbols are offsets, not addresses: validate says so before
// anything is read.
func TestPIESymbolsRefused(t *testing.T) {
	prog := buildC(t, counterC, "-pie", "-fPIE")
	dir := t.TempDir()
	seq := writeFile(t, dir, "seq.yaml", fmt.Sprintf("probes:\n  q: {gdb: {address: 127.0.0.1:1, attach: running}, elf: %q}\nsteps:\n  - mem_read: true\n    symbol: counter\n", prog))
	var out, errOut bytes.Buffer
	code := cli.Main([]string{"validate", seq}, strings.NewReader(""), &out, &errOut)
	want := seq + ":4:5: symbol counter: " + prog + " is position-independent (ELF type ET_DYN, linked at 0): its symbols are offsets from wherever the program is loaded when it runs, not addresses; build it with -no-pie"
	if code != cli.ExitInvalid || !strings.Contains(errOut.String(), want) {
		t.Errorf("exit %d, want %d and %q:\n%s%s", code, cli.ExitInvalid, want, out.String(), errOut.String())
	}
}

// buildC compiles src with cc and the flags given, and returns the
// program's path.
func buildC(t *testing.T, src string, flags ...string) string {
	t.Helper()
	cc := testenv.NeedTool(t, "cc", "apt-get install gcc")
	dir := t.TempDir()
	c := filepath.Join(dir, "counter.c")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(dir, "counter")
	if out, err := exec.Command(cc, append(append([]string{"-g", "-O0", "-o", prog}, flags...), c)...).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	return prog
}

// startStopped starts prog in a process group of its own, as a shell
// starts a program: gdbserver interrupts an attached program by signalling
// its process group. The program is killed when the test ends.
func startStopped(t *testing.T, prog string) int {
	t.Helper()
	cmd := exec.Command(prog)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd.Process.Pid
}

var listeningRE = regexp.MustCompile(`Listening on port (\d+)`)

// attachGDBServer attaches gdbserver to the program pid, on a free port,
// and returns its address once it listens, and a channel closed when
// gdbserver has ended.
func attachGDBServer(t *testing.T, gdbserver string, pid int) (string, <-chan struct{}) {
	t.Helper()
	cmd := exec.Command(gdbserver, "--attach", "127.0.0.1:0", fmt.Sprint(pid))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = cmd.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{})
	port := make(chan string, 1)
	var said testenv.Buffer
	go func() {
		defer close(ended)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			said.Write(append(sc.Bytes(), '\n'))
			if m := listeningRE.FindSubmatch(sc.Bytes()); m != nil {
				port <- string(m[1])
			}
		}
		cmd.Wait()
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-ended
	})
	select {
	case p := <-port:
		return "127.0.0.1:" + p, ended
	case <-ended:
		scope, _ := os.ReadFile("/proc/sys/kernel/yama/ptrace_scope")
		testenv.Missing(t, "gdbserver could not attach to a program (ptrace permission? kernel.yama.ptrace_scope = %q): %s", strings.TrimSpace(string(scope)), said.String())
	}
	return "", nil
}

// procState is the state letter of process pid (R, S, t for traced...).
func procState(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// pid (comm) state ...: comm may hold spaces and parentheses.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return f[0]
}
