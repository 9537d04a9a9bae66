package qemuseq

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hilrun/hilrun/internal/cli"
	"github.com/hilrun/hilrun/pkg/qemu/qemutest"
	"github.com/hilrun/hilrun/pkg/testenv"
)

// mainEnv makes the test binary run as hilrun (TestMain), so that tests
// can send a real hilrun real signals.
const mainEnv = "HILRUN_QEMUSEQ_AS_HILRUN"

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) == "1" {
		os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// elfBench writes a bench file that points probe's ELF file at the
// firmware as built for the tests, and returns its path.
func elfBench(t *testing.T, probe, elf string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "qemu.bench.yaml")
	if err := os.WriteFile(path, fmt.Appendf(nil, "probes:\n  %s: {elf: %q}\n", probe, elf), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// hilrun runs hilrun in the test process and returns its exit code and
// output.
func hilrun(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := cli.Main(args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

// The memory sequences pass through the GDB backend on QEMUs that hilrun
// run --qemu starts: firmware-memory.yaml on the firmware (its probe's ELF
// file from a bench file, as the tests build the firmware elsewhere),
// uboot-memory.yaml on U-Boot. No QEMU is left running.
func TestMemorySequences(t *testing.T) {
	qemutest.NeedQEMU(t)
	for _, tc := range []struct {
		file, name string
		args       func(t *testing.T) []string
	}{
		{"firmware-memory.yaml", "qemu-firmware-memory", func(t *testing.T) []string {
			elf := qemutest.Firmware(t)
			return []string{"--qemu", elf, "--bench", elfBench(t, "qemu", elf)}
		}},
		{"uboot-memory.yaml", "qemu-uboot-memory", func(t *testing.T) []string {
			return []string{"--qemu-machine", "virt", "--qemu-bios", qemutest.UBoot(t)}
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			args := append([]string{"run"}, tc.args(t)...)
			code, out, errOut := hilrun(append(args, tc.file)...)
			if code != 0 {
				t.Fatalf("hilrun %s: exit %d\n%s\n%s", strings.Join(args, " "), code, out, errOut)
			}
			if !strings.Contains(out, "PASSED "+tc.name+":") {
				t.Errorf("output lacks the verdict:\n%s", out)
			}
			if !strings.Contains(errOut, "GDB server /") || !strings.Contains(errOut, "/gdb") {
				t.Errorf("hilrun does not say where QEMU runs:\n%s", errOut)
			}
			noQEMUChildren(t, os.Getpid())
		})
	}
}

// A sequence whose probe launches QEMU needs nothing else: hilrun starts
// QEMU, binds the console and the probe, and stops QEMU after the run,
// passed or failed. firmware-launch.yaml runs with its launch replaced by
// a bench file's (the tests build the firmware elsewhere); a sequence of
// the test's own launches QEMU with a kernel path relative to itself.
func TestLaunchSpec(t *testing.T) {
	qemutest.NeedQEMU(t)
	elf := qemutest.Firmware(t)
	t.Run("firmware-launch.yaml", func(t *testing.T) {
		bench := filepath.Join(t.TempDir(), "qemu.bench.yaml")
		os.WriteFile(bench, fmt.Appendf(nil, "probes:\n  board:\n    launch:\n      qemu: {machine: mps2-an385, kernel: %q, console: console}\n    elf: %q\n", elf, elf), 0o644)
		code, out, errOut := hilrun("run", "--bench", bench, "firmware-launch.yaml")
		if code != 0 || !strings.Contains(out, "PASSED qemu-firmware-launch:") {
			t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
		}
		noQEMUChildren(t, os.Getpid())
	})
	for _, tc := range []struct {
		name, expect string
		code         int
		verdict      string
	}{
		{"passes", "hilrun-qemu 1.", 0, "PASSED"},
		{"fails", "hilrun-qemu 9.", 1, "FAILED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			copyFile(t, elf, filepath.Join(dir, "fw.elf"))
			seq := filepath.Join(dir, "seq.yaml")
			src := "name: own\nexpect_timeout: 2s\ndevices:\n  console:\nprobes:\n  fw:\n    launch:\n      qemu: {machine: mps2-an385, kernel: fw.elf, console: console}\n    elf: fw.elf\nsteps:\n  - {send: version, expect: " + strconv.Quote(tc.expect) + "}\n  - {mem_read: true, symbol: fw_version, width: 8, count: 6}\nfinally:\n  - {send: flag 5, expect: \"flag: 5\"}\n"
			os.WriteFile(seq, []byte(src), 0o644)
			code, out, errOut := hilrun("run", "--log-dir", filepath.Join(dir, "logs"), seq)
			if code != tc.code || !strings.Contains(out, tc.verdict+" own:") {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, tc.code, out, errOut)
			}
			if !strings.Contains(out, "✓") || !regexp.MustCompile(`step finally\.0 +send`).MatchString(out) {
				t.Errorf("the finally step did not run:\n%s", out)
			}
			logs, _ := filepath.Glob(filepath.Join(dir, "logs", "*", "qemu-fw.log"))
			if len(logs) != 1 {
				t.Errorf("no QEMU log qemu-fw.log under --log-dir: %v", logs)
			}
			noQEMUChildren(t, os.Getpid())
		})
	}
}

// A guest that hilrun's GDB probe attached to while it ran is still running
// after the run: its counter advances, and its shell answers.
func TestGuestRunsAfterTheRun(t *testing.T) {
	in := qemutest.StartFirmware(t)
	elf := qemutest.Firmware(t)
	code, out, errOut := hilrun("run", "--port", "console="+in.ConsolePath(), "--gdb", "qemu="+in.GDBAddr(), "--bench", elfBench(t, "qemu", elf), "firmware-memory.yaml")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	c := qemutest.OpenConsole(t, in)
	c.Prompt(qemutest.Prompt)
	before := c.Counter()
	// The counter counts the guest's milliseconds: the firmware's own sleep
	// makes sure some pass, however slow the host.
	c.Command("sleep 20", qemutest.Prompt)
	if after := c.Counter(); after <= before {
		t.Errorf("the counter stood at %d after the run; the guest does not run", before)
	}
}

// Ctrl-C while a step of a sequence that launched QEMU waits: the finally
// steps run on the guest, hilrun exits with 130, and QEMU is gone.
func TestInterruptStopsQEMU(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	qemutest.NeedQEMU(t)
	elf := qemutest.Firmware(t)
	dir := t.TempDir()
	seq := filepath.Join(dir, "seq.yaml")
	src := fmt.Sprintf("name: wait\ndevices:\n  console:\nprobes:\n  fw:\n    launch:\n      qemu: {machine: mps2-an385, kernel: %q, console: console}\nsteps:\n  - {send: version, expect: hilrun-qemu}\n  - {send: \"\", expect: never printed, timeout: 60s}\nfinally:\n  - {send: flag 3, expect: \"flag: 3\"}\n", elf)
	os.WriteFile(seq, []byte(src), 0o644)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "run", seq)
	cmd.Env = append(os.Environ(), mainEnv+"=1")
	var out, errOut testenv.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	waitFor(t, "the first step to pass", func() bool { return strings.Contains(out.String(), "step 0") })
	kids := qemuChildren(cmd.Process.Pid)
	if len(kids) != 1 {
		t.Fatalf("hilrun runs %d QEMUs, want 1", len(kids))
	}
	cmd.Process.Signal(syscall.SIGINT)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("hilrun: %v, want exit 130\n%s\n%s", err, out.String(), errOut.String())
	}
	if !regexp.MustCompile(`✓.*step finally\.0 +send`).MatchString(out.String()) {
		t.Errorf("the finally step did not pass:\n%s", out.String())
	}
	if _, err := os.Stat("/proc/" + strconv.Itoa(kids[0])); err == nil {
		if b, _ := os.ReadFile("/proc/" + strconv.Itoa(kids[0]) + "/stat"); !strings.Contains(string(b), ") Z ") {
			t.Errorf("QEMU (pid %d) outlived hilrun", kids[0])
		}
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(qemutest.Timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// qemuChildren lists the QEMU processes whose parent is pid (Linux only;
// nil elsewhere).
func qemuChildren(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 || !strings.Contains(s[:i], "(qemu-system") {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 1 && f[0] != "Z" && f[1] == strconv.Itoa(pid) {
			out = append(out, n)
		}
	}
	return out
}

// noQEMUChildren fails t when a QEMU started by pid still runs.
func noQEMUChildren(t *testing.T, pid int) {
	t.Helper()
	if kids := qemuChildren(pid); len(kids) > 0 {
		t.Errorf("QEMU still runs after the run: pids %v", kids)
	}
}

// hilrun repl --qemu talks to the firmware's shell and memory for a
// session, and a file whose probe launches QEMU does the same; QEMU stops
// with the session.
func TestRepl(t *testing.T) {
	qemutest.NeedQEMU(t)
	elf := qemutest.Firmware(t)
	dir := t.TempDir()
	copyFile(t, elf, filepath.Join(dir, "fw.elf"))
	seq := filepath.Join(dir, "seq.yaml")
	os.WriteFile(seq, []byte("devices:\n  console:\nprobes:\n  fw:\n    launch:\n      qemu: {machine: mps2-an385, kernel: fw.elf, console: console}\nsteps:\n  - {send: version}\n"), 0o644)
	for name, args := range map[string][]string{"--qemu": {"--qemu", elf}, "launch": {seq}} {
		t.Run(name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			in := strings.NewReader("{send: flag 77, expect: \"flag: 77\"}\nmdw 0x20000008\n:quit\n")
			code := cli.Main(append([]string{"repl"}, args...), in, &out, &errOut)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, out.String(), errOut.String())
			}
			if !strings.Contains(out.String(), "0x20000008: 0x0000004d") {
				t.Errorf("mdw does not read the flag the shell set:\n%s", out.String())
			}
			noQEMUChildren(t, os.Getpid())
		})
	}
}

// hilrun mcp --qemu serves the QEMU firmware: mem_read reads its memory
// through QEMU's GDB server, and a client's sequence may not launch a QEMU
// of its own.
func TestMCP(t *testing.T) {
	qemutest.NeedQEMU(t)
	elf := qemutest.Firmware(t)
	dir := t.TempDir()
	seq := filepath.Join(dir, "launch.yaml")
	os.WriteFile(seq, []byte("probes:\n  fw:\n    launch:\n      qemu: {machine: mps2-an385, kernel: /bin/sh}\nsteps:\n  - mem_read: 0x20000000\n"), 0o644)
	stdin, w := io.Pipe()
	var out, errOut testenv.Buffer
	done := make(chan int, 1)
	go func() { done <- cli.Main([]string{"mcp", "--qemu", elf, "--root", dir}, stdin, &out, &errOut) }()
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"qemu-test","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mem_read","arguments":{"address":"0x00000000","count":2}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"run_sequence","arguments":{"path":` + strconv.Quote(seq) + `}}}`,
	} {
		if _, err := io.WriteString(w, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "both answers", func() bool {
		return strings.Contains(out.String(), `"id":2,`) && strings.Contains(out.String(), `"id":3,`)
	})
	w.Close()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errOut.String())
	}
	// The vector table: the initial stack pointer, then the reset vector.
	if !strings.Contains(out.String(), "0x20010000") || !strings.Contains(out.String(), "0x00000101") {
		t.Errorf("mem_read does not give the vector table:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "launch: {qemu: ...} starts a program on the host") {
		t.Errorf("a client's QEMU launch is not refused:\n%s", out.String())
	}
	noQEMUChildren(t, os.Getpid())
}
