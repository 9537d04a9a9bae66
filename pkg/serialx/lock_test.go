//go:build unix

package serialx

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as a small program that opens one port with
// serialx, so that tests can race separate processes for a lock; see
// runRacer.
const racerEnv = "HILRUN_SERIALX_RACER"

// standInEnv tells a racer that its port is a pty standing in for a real
// serial port (see standIns).
const standInEnv = "HILRUN_SERIALX_STAND_IN"

// standIns are the ptys the tests open as stand-ins for real serial ports,
// by resolved path: acquireLock takes UUCP lock files for them, as for a
// real tty. A pty that is not here is locked as a pty.
var standIns sync.Map

func TestMain(m *testing.M) {
	isPty = func(path string) bool {
		if real, err := filepath.EvalSymlinks(path); err == nil {
			if _, ok := standIns.Load(real); ok {
				return false
			}
		}
		return ptyDevice(path)
	}
	if os.Getenv(racerEnv) != "" {
		if os.Getenv(standInEnv) != "" {
			standIn(os.Getenv("HILRUN_SERIALX_PORT"))
		}
		os.Exit(runRacer())
	}
	os.Exit(m.Run())
}

// standIn makes the pty at path a stand-in for a real serial port, until
// unStandIn.
func standIn(path string) {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		standIns.Store(real, true)
	}
}

func unStandIn(path string) {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		standIns.Delete(real)
	}
}

func isStandIn(path string) bool {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return false
	}
	_, ok := standIns.Load(real)
	return ok
}

// runRacer opens the port $HILRUN_SERIALX_PORT with lock directory
// $HILRUN_SERIALX_LOCKDIR. It prints "ready", waits for a line on stdin,
// opens, prints each warning as "warn MSG" and then "ok" or "err MSG"; an
// open port is held until stdin closes.
func runRacer() int {
	in := bufio.NewReader(os.Stdin)
	fmt.Println("ready")
	if _, err := in.ReadString('\n'); err != nil {
		return 2
	}
	c, err := Open(context.Background(), "racer", Config{Devices: anyDevice, Dial: anyAddr,
		Path:    os.Getenv("HILRUN_SERIALX_PORT"),
		LockDir: os.Getenv("HILRUN_SERIALX_LOCKDIR"),
		Warn:    func(msg string) { fmt.Println("warn " + msg) },
	})
	if err != nil {
		fmt.Println("err " + err.Error())
		return 0
	}
	fmt.Println("ok")
	io.Copy(io.Discard, in)
	if err := c.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// racer is a running runRacer process.
type racer struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
}

func startRacer(t *testing.T, exe, port, lockDir string, cred *syscall.Credential) *racer {
	t.Helper()
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), racerEnv+"=1", "HILRUN_SERIALX_PORT="+port, "HILRUN_SERIALX_LOCKDIR="+lockDir)
	if isStandIn(port) {
		cmd.Env = append(cmd.Env, standInEnv+"=1")
	}
	cmd.Stderr = os.Stderr
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &racer{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}
	t.Cleanup(func() {
		r.stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("racer %d: %v", cmd.Process.Pid, err)
			}
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Errorf("racer %d did not exit", cmd.Process.Pid)
		}
	})
	if line := r.line(t); line != "ready" {
		t.Fatalf("racer said %q, want ready", line)
	}
	return r
}

// line returns the racer's next line of output.
func (r *racer) line(t *testing.T) string {
	t.Helper()
	type result struct {
		s   string
		err error
	}
	ch := make(chan result, 1)
	go func() {
		s, err := r.out.ReadString('\n')
		ch <- result{strings.TrimSuffix(s, "\n"), err}
	}()
	select {
	case res := <-ch:
		if res.err != nil {
			t.Fatalf("racer %d: %v", r.cmd.Process.Pid, res.err)
		}
		return res.s
	case <-time.After(10 * time.Second):
		t.Fatalf("racer %d said nothing for 10 s", r.cmd.Process.Pid)
		return ""
	}
}

// result waits for the racer's outcome: its warnings and "ok" or "err MSG".
func (r *racer) result(t *testing.T) (warnings []string, outcome string) {
	t.Helper()
	for {
		line := r.line(t)
		if w, ok := strings.CutPrefix(line, "warn "); ok {
			warnings = append(warnings, w)
			continue
		}
		return warnings, line
	}
}

// holder starts `sleep 30`, a live process that is not hilrun to hold
// locks, and returns its PID.
func holder(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot start sleep: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd.Process.Pid
}

// deadPID returns the PID of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot run true: %v", err)
	}
	return cmd.Process.Pid
}

func lockPath(t *testing.T, dir, device string) string {
	t.Helper()
	real, err := filepath.EvalSymlinks(device)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "LCK.."+filepath.Base(real))
}

func readLock(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read lock file: %v", err)
	}
	return string(b)
}

func hdb(pid int) string { return fmt.Sprintf("%10d\n", pid) }

func wantGone(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lock file %s: stat = %v, want it removed", path, err)
	}
}

func wantBusy(t *testing.T, err error, pid int, command string) {
	t.Helper()
	var oe *OpenError
	if !errors.As(err, &oe) || oe.Kind != Busy {
		t.Fatalf("Open = %v, want a Busy *OpenError", err)
	}
	want := fmt.Sprintf("port busy: held by PID %d (%s)", pid, command)
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error = %q, want it to contain %q", err, want)
	}
}

func TestLockFile(t *testing.T) {
	d := newDevice(t)
	dir := t.TempDir()
	c := d.open(Config{Devices: anyDevice, Dial: anyAddr, LockDir: dir})
	lock := lockPath(t, dir, d.path)
	got := readLock(t, lock)
	if want := hdb(os.Getpid()); got != want || len(got) != 11 {
		t.Errorf("lock file = %q, want %q (HDB: 10 right-aligned digits and a newline)", got, want)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	wantGone(t, lock)
}

func TestNoLock(t *testing.T) {
	d := newDevice(t)
	dir := t.TempDir()
	d.open(Config{Devices: anyDevice, Dial: anyAddr, LockDir: dir, NoLock: true})
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("NoLock left %d files in the lock directory", len(entries))
	}
}

func TestLockExisting(t *testing.T) {
	live := holder(t)
	dead := deadPID(t)
	binaryPID := func(pid int) string {
		return string(binary.NativeEndian.AppendUint32(nil, uint32(pid)))
	}
	tests := []struct {
		name    string
		content string
		age     time.Duration // how long ago the lock was written
		busyPID int           // 0: the lock is stale and taken over
		wantMsg string        // for a busy lock without a PID
	}{
		{name: "dead PID", content: hdb(dead)},
		{name: "dead PID, binary format", content: binaryPID(dead)},
		{name: "empty, left by a crash", content: "", age: time.Minute},
		{name: "garbage, left by a crash", content: "hello\n", age: time.Minute},
		{name: "live PID", content: hdb(live), busyPID: live},
		{name: "live PID, unpadded", content: fmt.Sprintf("%d\n", live), busyPID: live},
		{name: "live PID, binary format", content: binaryPID(live), busyPID: live},
		{name: "empty, being written", content: "", wantMsg: "which holds no PID yet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDevice(t)
			dir := t.TempDir()
			lock := lockPath(t, dir, d.path)
			if err := os.WriteFile(lock, []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			if tt.age != 0 {
				at := time.Now().Add(-tt.age)
				if err := os.Chtimes(lock, at, at); err != nil {
					t.Fatal(err)
				}
			}
			c, err := Open(context.Background(), "dut", Config{Devices: anyDevice, Dial: anyAddr, Path: d.path, LockDir: dir})
			switch {
			case tt.busyPID != 0:
				wantBusy(t, err, tt.busyPID, "sleep")
				if !strings.HasSuffix(err.Error(), ", lock file "+lock) {
					t.Errorf("error = %q, want it to name %s", err, lock)
				}
			case tt.wantMsg != "":
				var oe *OpenError
				if !errors.As(err, &oe) || oe.Kind != Busy || !strings.Contains(err.Error(), tt.wantMsg) {
					t.Fatalf("Open = %v, want Busy with %q", err, tt.wantMsg)
				}
			default:
				if err != nil {
					t.Fatalf("Open over a stale lock: %v", err)
				}
				defer c.Close()
				if got := readLock(t, lock); got != hdb(os.Getpid()) {
					t.Errorf("lock file = %q, want ours", got)
				}
				return
			}
			if c != nil {
				t.Error("Open returned a console with its error")
			}
			if got := readLock(t, lock); got != tt.content {
				t.Errorf("a held lock changed: %q, want %q", got, tt.content)
			}
		})
	}
}

func TestLockSameProcess(t *testing.T) {
	d := newDevice(t)
	dir := t.TempDir()
	first := d.open(Config{Devices: anyDevice, Dial: anyAddr, LockDir: dir})
	c, err := Open(context.Background(), "again", Config{Devices: anyDevice, Dial: anyAddr, Path: d.path, LockDir: dir})
	if c != nil {
		c.Close()
	}
	wantBusy(t, err, os.Getpid(), processName(os.Getpid()))
	want := fmt.Sprintf("open %s: port busy: held by PID %d (%s), lock file %s",
		d.path, os.Getpid(), processName(os.Getpid()), lockPath(t, dir, d.path))
	if err.Error() != want {
		t.Errorf("error = %q\nwant    %q", err, want)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	d.open(Config{Devices: anyDevice, Dial: anyAddr, LockDir: dir}) // free again
}

func TestLockReplacedIsKept(t *testing.T) {
	d := newDevice(t)
	dir := t.TempDir()
	c := d.open(Config{Devices: anyDevice, Dial: anyAddr, LockDir: dir})
	lock := lockPath(t, dir, d.path)
	// Someone removed our lock and another program locked the port.
	other := hdb(holder(t))
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lock, []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if got := readLock(t, lock); got != other {
		t.Errorf("Close touched another program's lock: %q, want %q", got, other)
	}
}

func TestLockSymlink(t *testing.T) {
	d := newDevice(t)
	dir := t.TempDir()
	link := filepath.Join(t.TempDir(), "usb-hilrun_board_E661-if00")
	if err := os.Symlink(d.path, link); err != nil {
		t.Fatal(err)
	}
	c := d.open(Config{Devices: anyDevice, Dial: anyAddr, Path: link, LockDir: dir})
	lock := filepath.Join(dir, "LCK.."+filepath.Base(d.path))
	if got := readLock(t, lock); got != hdb(os.Getpid()) {
		t.Errorf("lock %s = %q", lock, got)
	}
	_, err := Open(context.Background(), "real", Config{Devices: anyDevice, Dial: anyAddr, Path: d.path, LockDir: dir})
	wantBusy(t, err, os.Getpid(), processName(os.Getpid()))
	c.Close()
	wantGone(t, lock)
}

func TestLockDirUnavailable(t *testing.T) {
	t.Run("missing", func(t *testing.T) {
		d := newDevice(t)
		dir := filepath.Join(t.TempDir(), "no-such-dir")
		var warnings []string
		c := d.open(Config{Devices: anyDevice, Dial: anyAddr, LockDir: dir, Warn: func(msg string) { warnings = append(warnings, msg) }})
		if len(warnings) != 1 || !strings.Contains(warnings[0], "without a lock file") ||
			!strings.Contains(warnings[0], "no such file or directory") {
			t.Errorf("warnings = %q", warnings)
		}
		d.print("hi")
		if _, err := c.Expect(timeout(t, 20*time.Second), 0, lit("hi"), nil); err != nil {
			t.Errorf("console without a lock does not work: %v", err)
		}
	})
	t.Run("not writable", func(t *testing.T) {
		d := newDevice(t)
		dir := t.TempDir()
		if os.Geteuid() != 0 {
			if err := os.Chmod(dir, 0o555); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Chmod(dir, 0o755) })
			var warnings []string
			d.open(Config{Devices: anyDevice, Dial: anyAddr, LockDir: dir, Warn: func(msg string) { warnings = append(warnings, msg) }})
			if len(warnings) != 1 || !strings.Contains(warnings[0], "permission denied") {
				t.Errorf("warnings = %q", warnings)
			}
			return
		}
		// Root may write any directory: open as nobody in a child process.
		// The child needs a test binary it may execute and a pty it may
		// open.
		bin := filepath.Join(t.TempDir(), "serialx.test")
		copyExecutable(t, bin)
		for _, p := range []string{filepath.Dir(bin), filepath.Dir(filepath.Dir(bin)), dir, filepath.Dir(dir)} {
			if err := os.Chmod(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chmod(d.path, 0o666); err != nil {
			t.Fatal(err)
		}
		r := startRacer(t, bin, d.path, dir, &syscall.Credential{Uid: 65534, Gid: 65534})
		io.WriteString(r.stdin, "go\n")
		warnings, outcome := r.result(t)
		if outcome != "ok" {
			t.Fatalf("open as nobody with an unwritable lock directory: %s", outcome)
		}
		if want := "permission denied; opening " + d.path + " without a lock file"; len(warnings) != 1 || !strings.Contains(warnings[0], want) {
			t.Errorf("warnings = %q, want one containing %q", warnings, want)
		}
	})
}

// copyExecutable copies the running test binary to path, mode 0755.
func copyExecutable(t *testing.T, path string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

// Three hilrun processes race for one port, each as a separate process
// (the lock is between processes), from a free port, from a stale lock
// they all want to take over, and from a lock a live program holds.
func TestLockRace(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const n = 3
	for _, holderKind := range []string{"none", "stale", "live"} {
		t.Run(holderKind, func(t *testing.T) {
			t.Parallel()
			for round := range 3 {
				d := newDevice(t)
				dir := t.TempDir()
				lock := lockPath(t, dir, d.path)
				var held int
				switch holderKind {
				case "stale":
					os.WriteFile(lock, []byte(hdb(deadPID(t))), 0o644)
				case "live":
					held = holder(t)
					os.WriteFile(lock, []byte(hdb(held)), 0o644)
				}
				racers := make([]*racer, n)
				for i := range racers {
					racers[i] = startRacer(t, exe, d.path, dir, nil)
				}
				var wg sync.WaitGroup
				for _, r := range racers {
					wg.Go(func() { io.WriteString(r.stdin, "go\n") })
				}
				wg.Wait()
				var winners []int
				outcomes := make([]string, n)
				for i, r := range racers {
					warnings, outcome := r.result(t)
					if len(warnings) != 0 {
						t.Errorf("racer warned: %q", warnings)
					}
					outcomes[i] = outcome
					if outcome == "ok" {
						winners = append(winners, r.cmd.Process.Pid)
					}
				}
				if holderKind == "live" {
					if len(winners) != 0 {
						t.Fatalf("round %d: %d racers took a port locked by a live process", round, len(winners))
					}
					for _, o := range outcomes {
						if want := fmt.Sprintf("port busy: held by PID %d (sleep)", held); !strings.Contains(o, want) {
							t.Errorf("round %d: racer said %q, want %q", round, o, want)
						}
					}
					if got := readLock(t, lock); got != hdb(held) {
						t.Errorf("round %d: lock = %q", round, got)
					}
					continue
				}
				if len(winners) != 1 {
					t.Fatalf("round %d: %d winners, want 1: %q", round, len(winners), outcomes)
				}
				if got := readLock(t, lock); got != hdb(winners[0]) {
					t.Errorf("round %d: lock = %q, want the winner's PID %d", round, got, winners[0])
				}
				want := fmt.Sprintf("port busy: held by PID %d (%s)", winners[0], processName(os.Getpid()))
				for _, o := range outcomes {
					if o != "ok" && !strings.Contains(o, want) {
						t.Errorf("round %d: loser said %q, want %q", round, o, want)
					}
				}
				for _, r := range racers {
					r.stdin.Close()
					io.Copy(io.Discard, r.out) // until it exits
				}
				wantGone(t, lock)
			}
		})
	}
}

func TestParseLockPID(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want int
	}{
		{name: "HDB", in: []byte("      4711\n"), want: 4711},
		{name: "unpadded", in: []byte("4711"), want: 4711},
		{name: "binary", in: binary.NativeEndian.AppendUint32(nil, 4711), want: 4711},
		{name: "four ASCII bytes", in: []byte("471\n"), want: 471},
		{name: "empty", in: nil, want: 0},
		{name: "garbage", in: []byte("pid=4711\n"), want: 0},
		{name: "negative", in: []byte("        -1\n"), want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := parseLockPID(tt.in); got != tt.want {
				t.Errorf("parseLockPID(%q) = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
	if got := string(formatLockPID(4711)); got != "      4711\n" {
		t.Errorf("formatLockPID(4711) = %q", got)
	}
}
