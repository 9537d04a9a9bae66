package qemu_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/qemu"
	"github.com/hilrun/hilrun/pkg/qemu/qemutest"
)

// The firmware boots under QEMU and its shell works on the console pty:
// the banner it printed before the console was opened waits there, the
// prompt comes back, commands answer and the counter runs.
func TestFirmwareShell(t *testing.T) {
	in := qemutest.StartFirmware(t)
	if !strings.HasPrefix(in.ConsolePath(), "/dev/") {
		t.Errorf("console path %q, want a pty", in.ConsolePath())
	}
	c := qemutest.OpenConsole(t, in)
	c.Expect(0, `hilrun qemu board\r\nhilrun-qemu 1\.0\.0\r\nboot: ok\r\n\r\nqemu> `)
	c.Prompt(qemutest.Prompt)

	if got := c.Command("version", qemutest.Prompt); got != qemutest.Version+"\r\n" {
		t.Errorf("version printed %q, want %q", got, qemutest.Version+"\r\n")
	}
	for _, tc := range []struct{ cmd, want string }{
		{"led on", "led: on\r\n"},
		{"blink on", "blink: 1\r\n"},
		{"blink off", "blink: 0\r\n"},
		{"flag 42", "flag: 42\r\n"},
		{"flag", "flag: 42\r\n"},
		{"echo hi there; echo -n x", "hi there\r\nx"},
		{"peek 0x20000008", "0x20000008: 0x0000002a\r\n"},
		{"poke 0x20000004 0x1ff 8", "value 0x1ff does not fit in 8 bits\r\n"},
		{"peek 0xf0000000", "bus fault at 0xf0000000\r\n"},
		{"nope", "unknown command: nope (try help)\r\n"},
	} {
		if got := c.Command(tc.cmd, qemutest.Prompt); got != tc.want {
			t.Errorf("%s printed %q, want %q", tc.cmd, got, tc.want)
		}
	}
	status := c.Command("status", qemutest.Prompt)
	for _, want := range []string{"led: off\r\n", "blink: 0\r\n", "flag: 42\r\n", "uptime_ms: "} {
		if !strings.Contains(status, want) {
			t.Errorf("status printed %q, want it to hold %q", status, want)
		}
	}

	// SysTick counts milliseconds: the counter moves between two commands
	// at the latest once a millisecond has passed.
	first := c.Counter()
	deadline := time.Now().Add(qemutest.Timeout)
	for c.Counter() <= first {
		if time.Now().After(deadline) {
			t.Fatalf("the counter stayed at %d for %v", first, qemutest.Timeout)
		}
	}
}

// The console can be closed and opened again: QEMU never sees it hang up,
// and what the guest printed in between waits for the next reader.
func TestConsoleReopened(t *testing.T) {
	in := qemutest.StartFirmware(t)
	c := qemutest.OpenConsole(t, in)
	c.Prompt(qemutest.Prompt)
	c.Close()

	// A command typed with no console open: its echo and reply wait.
	f, err := os.OpenFile(in.ConsolePath(), os.O_WRONLY|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("version\r")); err != nil {
		t.Fatal(err)
	}
	f.Close()

	c = qemutest.OpenConsole(t, in)
	c.Expect(0, `^version\r\nhilrun-qemu 1\.0\.0\r\nqemu> `)
	if got := c.Command("count", qemutest.Prompt); !strings.HasPrefix(got, "counter: ") {
		t.Errorf("count on the reopened console printed %q", got)
	}
}

// Input typed ahead while the firmware is busy is never dropped, even
// beyond its 256-byte queue: the UART holds the next byte, QEMU the rest.
func TestFirmwareTypeAhead(t *testing.T) {
	in := qemutest.StartFirmware(t)
	c := qemutest.OpenConsole(t, in)
	c.Prompt(qemutest.Prompt)
	from := c.Send("sleep 1000")
	c.Expect(from, `sleep 1000\r\n`)
	var ahead strings.Builder
	const lines = 60 // about 1 KiB
	for i := range lines {
		fmt.Fprintf(&ahead, "echo ahead-%02d\r", i)
	}
	if _, err := c.Write(context.Background(), []byte(ahead.String())); err != nil {
		t.Fatal(err)
	}
	for i := range lines {
		m := c.Expect(from, fmt.Sprintf(`\r\nahead-%02d\r\n`, i))
		from = m.End
	}
}

// Ctrl-C ends a long command and discards the line being typed, and the
// firmware reboots on a crash.
func TestFirmwareInterruptAndCrash(t *testing.T) {
	in := qemutest.StartFirmware(t)
	c := qemutest.OpenConsole(t, in)
	c.Prompt(qemutest.Prompt)

	from := c.Send("sleep 100000")
	c.Expect(from, `sleep 100000\r\n`)
	from = c.Cursor()
	if _, err := c.Write(context.Background(), []byte("half a line\x03")); err != nil {
		t.Fatal(err)
	}
	c.Expect(from, `\^C\r\nqemu> $`)
	if got := c.Command("version", qemutest.Prompt); got != qemutest.Version+"\r\n" {
		t.Errorf("after Ctrl-C, version printed %q", got)
	}

	from = c.Send("panic")
	c.Expect(from, `HardFault: PC 0x[0-9a-f]{8}.*\r\nRebooting\.\.\.\r\nhilrun qemu board\r\n(?s:.*)qemu> `)
	if n := c.Counter(); n > 60000 {
		t.Errorf("after the reboot the counter is %d, want it restarted", n)
	}
}

// QEMU's GDB server answers on GDBAddr and reads the firmware's counter.
// (A raw exchange: pkg/gdbremote is the real client.)
func TestGDBServer(t *testing.T) {
	in := qemutest.StartFirmware(t)
	c := qemutest.OpenConsole(t, in)
	c.Prompt(qemutest.Prompt)
	c.Command("flag 7", qemutest.Prompt)

	conn, err := net.DialTimeout("unix", in.GDBAddr(), qemutest.Timeout)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(qemutest.Timeout))
	r := bufio.NewReader(conn)
	// rsp sends cmd and returns its reply. QEMU stops the guest when a
	// debugger connects and may say so with a stop reply ("T02thread:01;")
	// of its own, which is skipped.
	rsp := func(cmd string) string {
		t.Helper()
		var sum byte
		for i := range len(cmd) {
			sum += cmd[i]
		}
		if _, err := fmt.Fprintf(conn, "$%s#%02x", cmd, sum); err != nil {
			t.Fatal(err)
		}
		for {
			if _, err := r.ReadString('$'); err != nil { // acks before it
				t.Fatalf("%s: %v", cmd, err)
			}
			reply, err := r.ReadString('#')
			if err != nil {
				t.Fatalf("%s: %v", cmd, err)
			}
			if _, err := r.Discard(2); err != nil {
				t.Fatal(err)
			}
			conn.Write([]byte("+"))
			if cmd != "?" && strings.HasPrefix(reply, "T") {
				continue
			}
			return strings.TrimSuffix(reply, "#")
		}
	}
	// flag at 0x20000008, little-endian.
	if got := rsp("m20000008,4"); got != "07000000" {
		t.Errorf("flag read through gdb as %q, want 07000000", got)
	}
	if got := rsp(fmt.Sprintf("m%x,4", qemutest.CounterAddr)); len(got) != 8 || got == "00000000" {
		t.Errorf("counter read through gdb as %q, want a running counter", got)
	}
	rsp("D") // detach: the guest runs on
	if got := c.Command("flag", qemutest.Prompt); got != "flag: 7\r\n" {
		t.Errorf("after detaching, flag printed %q", got)
	}
}

// U-Boot boots on QEMU's virt machine from -bios; its autoboot is
// interrupted and its shell answers.
func TestUBoot(t *testing.T) {
	in := qemutest.StartUBoot(t)
	c := qemutest.OpenConsole(t, in)
	c.Prompt("=> ")
	got := c.Command("version", "=> ")
	if !strings.HasPrefix(got, "U-Boot ") {
		t.Errorf("U-Boot's version printed %q", got)
	}
}

// Close ends QEMU and its process group and releases the pty; it is
// idempotent.
func TestCloseLeavesNothing(t *testing.T) {
	qemutest.NeedQEMU(t)
	elf := qemutest.Firmware(t)
	log := filepath.Join(t.TempDir(), "qemu.log")
	ctx, cancel := context.WithTimeout(context.Background(), qemutest.Timeout)
	defer cancel()
	in, err := qemu.Start(ctx, qemu.Spec{Procs: qemutest.Procs, Machine: qemutest.Machine, Kernel: elf, LogFile: log})
	if err != nil {
		t.Fatal(err)
	}
	pid, pty := in.Pid(), in.ConsolePath()
	if err := in.Close(ctx); err != nil {
		t.Errorf("close: %v", err)
	}
	select {
	case <-in.Done():
	default:
		t.Error("Done is open after Close")
	}
	// QEMU itself is reaped by Close; the watcher procgroup put in its
	// group is killed by Close and reaped by init, a moment later.
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("qemu (pid %d) after Close: %v, want ESRCH", pid, err)
	}
	waitGroupGone(t, pid)
	if err := in.Close(ctx); err != nil {
		t.Errorf("second close: %v", err)
	}
	// QEMU held the pty's master and is gone; the Instance must not hold
	// the pty either. (Its path may be another pty's by now.)
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		// A pty whose master closed reads "/dev/pts/N (deleted)".
		if link, _ := os.Readlink("/proc/self/fd/" + fd.Name()); link == pty || link == pty+" (deleted)" {
			t.Errorf("descriptor %s still holds %s after Close", fd.Name(), pty)
		}
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "char device redirected to "+pty) {
		t.Errorf("log file holds %q, want QEMU's output", b)
	}
}

// A QEMU that Start launched dies with the process that launched it, even
// when that process is killed with SIGKILL.
func TestDiesWithHilrun(t *testing.T) {
	qemutest.NeedQEMU(t)
	elf := qemutest.Firmware(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestDiesWithHilrun$")
	cmd.Env = append(os.Environ(), "HILRUN_QEMU_HELPER=1", "HILRUN_QEMU_ELF="+elf)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Wait()
		t.Fatalf("the helper printed no pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("the helper printed %q", line)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("qemu %d is not running: %v", pid, err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	waitGroupGone(t, pid)
}

// waitGroupGone waits for process group pgid to be gone, up to
// qemutest.Timeout, and kills what is left of it then.
func waitGroupGone(t *testing.T, pgid int) {
	t.Helper()
	deadline := time.Now().Add(qemutest.Timeout)
	for syscall.Kill(-pgid, 0) == nil {
		if time.Now().After(deadline) {
			syscall.Kill(-pgid, syscall.SIGKILL)
			t.Fatalf("process group %d still there after %v", pgid, qemutest.Timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestMain(m *testing.M) {
	if os.Getenv("HILRUN_QEMU_HELPER") == "1" {
		// Start QEMU, print its pid and wait to be killed.
		ctx, cancel := context.WithTimeout(context.Background(), qemutest.Timeout)
		in, err := qemu.Start(ctx, qemu.Spec{Procs: qemutest.Procs, Machine: qemutest.Machine, Kernel: os.Getenv("HILRUN_QEMU_ELF")})
		cancel()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		fmt.Println(in.Pid())
		select {}
	}
	os.Exit(m.Run())
}

// Start's errors say what is wrong: QEMU missing (with the package to
// install), an image missing, a machine QEMU does not know (in its words).
func TestStartErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), qemutest.Timeout)
	defer cancel()
	missing := filepath.Join(t.TempDir(), "missing.elf")
	for _, tc := range []struct {
		name  string
		spec  qemu.Spec
		qemu  bool // needs QEMU installed
		is    error
		wants []string
	}{
		{"no machine", qemu.Spec{Procs: qemutest.Procs}, false, nil, []string{"no machine given"}},
		{"qemu missing", qemu.Spec{Procs: qemutest.Procs, Binary: "qemu-system-arm-hilrun-missing", Machine: "virt"}, false, qemu.ErrNotInstalled,
			[]string{"start qemu: qemu-system-arm-hilrun-missing is not installed (Debian: apt-get install qemu-system-arm)"}},
		{"kernel missing", qemu.Spec{Procs: qemutest.Procs, Machine: "virt", Kernel: missing}, true, fs.ErrNotExist, []string{"kernel", missing}},
		{"bios missing", qemu.Spec{Procs: qemutest.Procs, Machine: "virt", BIOS: missing}, true, fs.ErrNotExist, []string{"bios", missing}},
		{"unknown machine", qemu.Spec{Procs: qemutest.Procs, Machine: "hilrun-no-such-board"}, true, nil,
			[]string{"start qemu -machine hilrun-no-such-board: exited with exit status 1 before it was ready", "unsupported machine type"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.qemu {
				qemutest.NeedQEMU(t)
			}
			in, err := qemu.Start(ctx, tc.spec)
			if err == nil {
				in.Close(ctx)
				t.Fatal("Start succeeded")
			}
			if in != nil {
				t.Errorf("Start returned an instance with its error")
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v, want it to wrap %v", err, tc.is)
			}
			for _, w := range tc.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q, want it to say %q", err, w)
				}
			}
		})
	}
}

// QEMU's GDB server is a Unix socket in a folder only hilrun's user can
// enter, not a TCP port anyone on the machine could reach, and Close
// removes the folder.
func TestGDBServerIsPrivate(t *testing.T) {
	in := qemutest.StartFirmware(t)
	sock := in.GDBAddr()
	fi, err := os.Lstat(sock)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&os.ModeSocket == 0 {
		t.Fatalf("%s is a %v, not a socket", sock, fi.Mode())
	}
	dir := filepath.Dir(sock)
	di, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if perm := di.Mode().Perm(); perm != 0o700 {
		t.Errorf("the socket's folder %s has mode %v, want 0700", dir, perm)
	}
	if st, ok := di.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		t.Errorf("the socket's folder belongs to uid %d, not to us (%d)", st.Uid, os.Getuid())
	}
	for _, arg := range qemuArgs(t, in.Pid()) {
		if strings.Contains(arg, "tcp:") {
			t.Errorf("QEMU listens on TCP: %q", arg)
		}
	}
	if err := in.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after Close the socket's folder %s: %v, want it gone", dir, err)
	}
}

// qemuArgs returns the command line of process pid.
func qemuArgs(t *testing.T, pid int) []string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
}
