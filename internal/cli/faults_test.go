package cli_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hilrun/hilrun/internal/cli"
	"github.com/hilrun/hilrun/pkg/sim"
	"github.com/hilrun/hilrun/pkg/testenv"
)

func writeFile(t *testing.T, dir, name, src string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// hilrunBinary returns a path that runs this test binary as hilrun (see
// TestMain), so tests can send it real signals.
func hilrunBinary(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "hilrun")
	if err := os.Symlink(exe, link); err != nil {
		t.Fatal(err)
	}
	return link
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSignalRunsFinallyAndWritesReports interrupts a real hilrun process
// while a step waits: finally steps run, the reports hold the partial
// results, and the exit code is 130.
func TestSignalRunsFinallyAndWritesReports(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			seq := writeFile(t, dir, "seq.yaml", `
name: interrupted
steps:
  - send: echo started
    expect: started
  - expect: never printed
    timeout: 60s
  - send: version
finally:
  - send: led off
    expect: LED off
`)
			var out, errOut testenv.Buffer
			cmd := exec.Command(hilrunBinary(t), "run", "--sim", "--json", filepath.Join(dir, "r.json"), "--junit", filepath.Join(dir, "j.xml"), seq)
			cmd.Stdout, cmd.Stderr = &out, &errOut
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the first step to pass", func() bool { return strings.Contains(out.String(), "echo started") })
			time.Sleep(100 * time.Millisecond)
			began := time.Now()
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			if code := cmd.ProcessState.ExitCode(); code != cli.ExitInterrupted {
				t.Fatalf("exit code %d (%v), want 130\nstdout:\n%s\nstderr:\n%s", code, err, out.String(), errOut.String())
			}
			if d := time.Since(began); d > 20*time.Second {
				t.Errorf("hilrun took %s to stop after %s", d, sig)
			}
			var rep struct {
				Passed    bool
				Sequences []struct {
					Status string
					Steps  []struct {
						Path, Status string
					}
				}
			}
			data, err := os.ReadFile(filepath.Join(dir, "r.json"))
			if err != nil {
				t.Fatalf("no JSON report: %v", err)
			}
			if err := json.Unmarshal(data, &rep); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range rep.Sequences[0].Steps {
				got = append(got, s.Path+":"+s.Status)
			}
			// The JSON report's statuses are passed, failed, error and
			// skipped: an interrupted step is an error there.
			want := "0:passed 1:error 2:skipped finally.0:passed"
			if strings.Join(got, " ") != want {
				t.Errorf("steps = %v, want %s", got, want)
			}
			if rep.Passed {
				t.Error("an interrupted run reported passed")
			}
			// The JUnit report starts with the interrupt, and strict CI
			// servers accept it.
			junit, err := os.ReadFile(filepath.Join(dir, "j.xml"))
			if err != nil {
				t.Fatalf("no JUnit report: %v", err)
			}
			if i, j := strings.Index(string(junit), "<testcase "), strings.Index(string(junit), `<testcase name="(interrupted)"`); i < 0 || i != j {
				t.Errorf("the JUnit report's first testcase is not the interrupt:\n%s", junit)
			}
			checkJUnitSchema(t, filepath.Join(dir, "j.xml"))
		})
	}
}

// TestDeviceDisconnected unplugs the board while a step waits: the step
// fails at once with a clear message and hilrun exits 3.
func TestDeviceDisconnected(t *testing.T) {
	b := sim.New(sim.Options{})
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	dir := t.TempDir()
	seq := writeFile(t, dir, "seq.yaml", `
steps:
  - send: echo ready
    expect: ready
  - expect: never printed
    timeout: 60s
finally:
  - delay: 1ms
`)
	// The board goes once hilrun talks to it, however long it takes to
	// start.
	var unplug sync.Once
	b.OnReceive(func(l sim.RxLine) {
		if strings.Contains(l.Line, "echo ready") {
			unplug.Do(func() { go b.Unplug() })
		}
	})
	var out, errOut bytes.Buffer
	began := time.Now()
	code := cli.Main([]string{"run", "--port", "console=" + b.SerialPath(), "--json", "-", seq}, strings.NewReader(""), &out, &errOut)
	if code != cli.ExitInfra {
		t.Fatalf("exit code %d, want 3\n%s\n%s", code, out.String(), errOut.String())
	}
	if d := time.Since(began); d > 30*time.Second {
		t.Errorf("took %s: the disconnection was not noticed until the timeout", d)
	}
	if !strings.Contains(errOut.String(), "device disconnected") || !strings.Contains(out.String(), `"status": "error"`) {
		t.Errorf("output does not say the device disconnected:\n%s\n%s", out.String(), errOut.String())
	}
}

// TestReconnect replugs the board (a new pty behind a stable link, as a USB
// device re-enumerating) while a step waits for its banner.
func TestReconnect(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "ttyBOARD")
	b := sim.New(sim.Options{Link: link})
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	seq := writeFile(t, dir, "seq.yaml", `
devices:
  board: {port: `+link+`, reconnect: true}
steps:
  - send: echo before
    expect: before
  - expect: "hilrun virtual board"
    timeout: 20s
  - send: echo after
    expect: after
`)
	first := b.PtyPath()
	var out, errOut testenv.Buffer
	// The board replugs once the first step passed (hilrun printed it).
	done := make(chan struct{})
	go func() {
		for !strings.Contains(out.String(), "echo before") {
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
		b.Unplug()
		time.Sleep(300 * time.Millisecond)
		b.Replug()
	}()
	code := cli.Main([]string{"run", seq}, strings.NewReader(""), &out, &errOut)
	close(done)
	if code != cli.ExitPassed {
		t.Fatalf("exit code %d, want 0\n%s\n%s", code, out.String(), errOut.String())
	}
	if b.PtyPath() == first {
		t.Error("the board was not replugged on a new pty")
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

func dialable(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// Ctrl-C during a host command and during a camera capture stops the
// program hilrun started (its whole process group), runs finally and
// leaves nothing behind.
func TestSignalStopsHostCommandAndCamera(t *testing.T) {
	testenv.NeedTool(t, "ffmpeg", "apt-get install ffmpeg")
	// The sleep's length is this test's own, so that pgrep finds no other
	// sleep on a busy machine.
	sleep := fmt.Sprintf("sleep 300.%06d", time.Now().UnixNano()%1000000)
	for _, tc := range []struct{ name, step, started string }{
		{"exec", "exec: [sh, -c, 'echo hilrun-test-child-$$; " + sleep + "']", "hilrun-test-child-"},
		// A camera that never delivers a frame: ffmpeg waits on a pipe.
		{"camera", "capture: {camera: slow}", "camera  "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			fifo := filepath.Join(dir, "never")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			seq := writeFile(t, dir, "seq.yaml", `
name: interrupted
cameras:
  slow: {input: `+fifo+`, format: mjpeg}
steps:
  - `+tc.step+`
    timeout: 300s
finally:
  - exec: [sh, -c, "echo cleaned > `+filepath.Join(dir, "finally")+`"]
`)
			var out, errOut testenv.Buffer
			cmd := exec.Command(hilrunBinary(t), "run", "-v", "--log-dir", filepath.Join(dir, "logs"), seq)
			cmd.Stdout, cmd.Stderr = &out, &errOut
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var child string
			waitFor(t, "the step to start its program", func() bool {
				if tc.name == "camera" {
					child = pgrep(t, fifo)
				} else if i := strings.Index(out.String(), tc.started); i >= 0 {
					child = pgrep(t, sleep)
				}
				return child != ""
			})
			t.Logf("interrupting hilrun while process %s runs: %s", child, psCommand(child))
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			cmd.Wait()
			if code := cmd.ProcessState.ExitCode(); code != cli.ExitInterrupted {
				t.Fatalf("exit code %d, want 130\nstdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
			}
			if b, err := os.ReadFile(filepath.Join(dir, "finally")); err != nil || string(b) != "cleaned\n" {
				t.Errorf("finally did not run: %q %v", b, err)
			}
			waitFor(t, "the program to be gone", func() bool { return !processAlive(child) })
		})
	}
}

// pgrep returns the PID of a process whose command line contains s, or "".
func pgrep(t *testing.T, s string) string {
	t.Helper()
	out, _ := exec.Command("pgrep", "-f", "--", s).Output()
	return strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
}

func psCommand(pid string) string {
	b, _ := os.ReadFile("/proc/" + pid + "/cmdline")
	return strings.ReplaceAll(string(b), "\x00", " ")
}

func processAlive(pid string) bool {
	_, err := os.Stat("/proc/" + pid)
	return err == nil
}

// A hilrun mcp killed with SIGKILL cannot remove its temporary folders;
// the next hilrun that starts does.
func TestKilledServerFoldersAreSwept(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ours := func() []string {
		m, _ := filepath.Glob(filepath.Join(tmp, "hilrun-*"))
		return m
	}
	cmd := exec.Command(hilrunBinary(t), "mcp", "--sim")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Once the server serves, every folder it made holds its lock: a
	// folder that merely exists may not yet (see tmpdir.New).
	serving := make(chan string, 1)
	go func() {
		var log strings.Builder
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "serving MCP on standard input and output") {
				serving <- ""
				io.Copy(io.Discard, stderr)
				return
			}
		}
		serving <- log.String()
	}()
	select {
	case out := <-serving:
		if out != "" {
			t.Fatalf("hilrun mcp --sim ended before it served:\n%s", out)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("hilrun mcp --sim did not serve within 60 s")
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	// OpenOCD, which hilrun launched with its configuration in a folder
	// of tmp, follows its parent.
	waitFor(t, "the server's OpenOCD to end", func() bool { return pgrep(t, tmp) == "" })
	if len(ours()) == 0 {
		t.Fatal("the killed server left no folder: nothing to test")
	}
	// The sweep runs before the command, so it is over when the process
	// is.
	if out, err := exec.Command(hilrunBinary(t), "version").CombinedOutput(); err != nil {
		t.Fatalf("hilrun version: %v\n%s", err, out)
	}
	if left := ours(); len(left) > 0 {
		t.Errorf("left after the next start: %q", left)
	}
}
