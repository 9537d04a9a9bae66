package cli_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hilrun/hilrun/internal/cli"
	"github.com/hilrun/hilrun/pkg/sim"
	"github.com/hilrun/hilrun/pkg/testenv"
)

// waitExit waits for cmd, at most 60 s (an upper bound for a hang), and
// returns its exit code.
func waitExit(t *testing.T, cmd *exec.Cmd, out, errOut *testenv.Buffer) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("hilrun did not exit\nstdout:\n%s\nstderr:\n%s", out, errOut)
	}
	return cmd.ProcessState.ExitCode()
}

func emptyDir(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		t.Errorf("left behind in the temporary folder: %s", e.Name())
	}
}

// TestClosedStdout closes hilrun's standard output early, as `| head -2`
// does: the run goes on to its end, finally runs, the report is written,
// nothing is left in the temporary folder, and the exit code is the run's.
func TestClosedStdout(t *testing.T) {
	dir := t.TempDir()
	tmp := filepath.Join(dir, "tmp")
	os.Mkdir(tmp, 0o700)
	gate := filepath.Join(dir, "go")
	seq := writeFile(t, dir, "seq.yaml", `
name: piped
steps:
  - send: echo one
    expect: one
  - exec: [sh, -c, 'while [ ! -e `+gate+` ]; do sleep 0.05; done']
    timeout: 60s
  - send: echo two
    expect: two
  - send: echo three
    expect: three
finally:
  - exec: [sh, -c, "echo cleaned > `+filepath.Join(dir, "finally")+`"]
`)
	cmd := exec.Command(hilrunBinary(t), "run", "--sim", "--log-dir", filepath.Join(dir, "logs"), "--json", filepath.Join(dir, "r.json"), seq)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	var errOut testenv.Buffer
	cmd.Stderr = &errOut
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Read two lines, as head -2 does, then close the pipe.
	sc := bufio.NewScanner(stdout)
	for range 2 {
		if !sc.Scan() {
			t.Fatalf("hilrun printed less than two lines: %v\n%s", sc.Err(), errOut.String())
		}
	}
	stdout.Close()
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var none testenv.Buffer
	if code := waitExit(t, cmd, &none, &errOut); code != cli.ExitPassed {
		t.Fatalf("exit code %d, want 0\nstderr:\n%s", code, errOut.String())
	}
	if !strings.Contains(errOut.String(), "the progress report stopped") {
		t.Errorf("hilrun did not say its progress report stopped:\n%s", errOut.String())
	}
	if b, err := os.ReadFile(filepath.Join(dir, "finally")); err != nil || string(b) != "cleaned\n" {
		t.Errorf("finally did not run: %q %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "r.json")); err != nil || !strings.Contains(string(b), `"passed": true`) {
		t.Errorf("no passing JSON report: %v\n%s", err, b)
	}
	emptyDir(t, tmp)
}

// TestSignalWhileStarting interrupts hilrun run --sim and hilrun sim while
// the virtual board's OpenOCD starts (a stand-in that never becomes ready,
// so the moment is certain): hilrun stops at once with 130, and leaves no
// temporary folder or process behind.
func TestSignalWhileStarting(t *testing.T) {
	for _, command := range []string{"run", "sim"} {
		t.Run(command, func(t *testing.T) {
			dir := t.TempDir()
			tmp := filepath.Join(dir, "tmp")
			bin := filepath.Join(dir, "bin")
			os.Mkdir(tmp, 0o700)
			os.Mkdir(bin, 0o755)
			marker := fmt.Sprintf("1000.%d", os.Getpid())
			writeFile(t, bin, "openocd", "#!/bin/sh\nexec sleep "+marker+"\n")
			os.Chmod(filepath.Join(bin, "openocd"), 0o755)
			seq := writeFile(t, dir, "seq.yaml", `
probes:
  board: {}
steps:
  - mem_read: 0x20000000
`)
			args := []string{"run", "--sim", seq}
			if command == "sim" {
				args = []string{"sim"}
			}
			cmd := exec.Command(hilrunBinary(t), args...)
			cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			var out, errOut testenv.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errOut
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the stand-in openocd to start", func() bool { return pgrep(t, "^sleep "+marker) != "" })
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			if code := waitExit(t, cmd, &out, &errOut); code != cli.ExitInterrupted {
				t.Fatalf("exit code %d, want 130\nstdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
			}
			if !strings.Contains(errOut.String(), "interrupted while starting the virtual board") {
				t.Errorf("hilrun did not say what it was interrupted doing:\n%s", errOut.String())
			}
			emptyDir(t, tmp)
			waitFor(t, "the stand-in openocd to be gone", func() bool { return pgrep(t, "^sleep "+marker) == "" })
		})
	}
}

// TestSignalWhileWritingReports interrupts hilrun twice while it writes a
// JSON report to a pipe nobody reads: the second signal abandons the
// report and hilrun exits 130. (TestTwoSignalsKeepReports: after two
// signals during the run, the reports are still written.)
func TestSignalWhileWritingReports(t *testing.T) {
	dir := t.TempDir()
	// A report far larger than a pipe's buffer.
	seq := writeFile(t, dir, "seq.yaml", `
name: big
steps:
  - repeat: {count: 3000}
    steps:
      - set: {x: "a value long enough to make the report grow quickly"}
`)
	cmd := exec.Command(hilrunBinary(t), "run", "--json", "-", seq)
	var errOut testenv.Buffer
	cmd.Stderr = &errOut
	stdout, err := cmd.StdoutPipe() // never read
	if err != nil {
		t.Fatal(err)
	}
	defer stdout.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the run to end", func() bool { return strings.Contains(errOut.String(), "PASSED big") })
	cmd.Process.Signal(syscall.SIGINT)
	waitFor(t, "hilrun to acknowledge the signal", func() bool { return strings.Contains(errOut.String(), "signal again") })
	// Should the first signal have come before the reports were begun,
	// the second cuts finally steps short instead: signal until hilrun
	// abandons the reports.
	exited := make(chan struct{})
	defer close(exited)
	go func() {
		for !strings.Contains(errOut.String(), "abandoning the reports") {
			cmd.Process.Signal(syscall.SIGINT)
			select {
			case <-exited:
				return
			case <-time.After(time.Second):
			}
		}
	}()
	var none testenv.Buffer
	if code := waitExit(t, cmd, &none, &errOut); code != cli.ExitInterrupted {
		t.Fatalf("exit code %d, want 130\nstderr:\n%s", code, errOut.String())
	}
	if !strings.Contains(errOut.String(), "reports abandoned") {
		t.Errorf("hilrun did not say it abandoned the reports:\n%s", errOut.String())
	}
}

// TestReportModes runs hilrun under umask 027: its reports, logs and log
// folders get the modes the umask allows, not 0600.
func TestReportModes(t *testing.T) {
	dir := t.TempDir()
	seq := writeFile(t, dir, "seq.yaml", "name: modes\nsteps:\n  - send: echo hi\n    expect: hi\n")
	logs := filepath.Join(dir, "logs")
	cmd := exec.Command("sh", "-c", `umask 027; exec "$0" "$@"`, hilrunBinary(t), "run", "--sim",
		"--log-dir", logs, "--json", filepath.Join(dir, "out", "r.json"), "--junit", filepath.Join(dir, "j.xml"), seq)
	var out, errOut testenv.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s\n%s", err, out.String(), errOut.String())
	}
	runDirs, _ := filepath.Glob(filepath.Join(logs, "*-modes"))
	if len(runDirs) != 1 {
		t.Fatalf("log folders: %v", runDirs)
	}
	for _, tc := range []struct {
		path string
		want os.FileMode
	}{
		{filepath.Join(dir, "out", "r.json"), 0o640},
		{filepath.Join(dir, "j.xml"), 0o640},
		{filepath.Join(dir, "out"), 0o750 | os.ModeDir},
		{logs, 0o750 | os.ModeDir},
		{runDirs[0], 0o750 | os.ModeDir},
		{filepath.Join(runDirs[0], "console.log"), 0o640},
		{filepath.Join(runDirs[0], "console.timeline.jsonl"), 0o640},
	} {
		fi, err := os.Stat(tc.path)
		if err != nil {
			t.Error(err)
			continue
		}
		if fi.Mode() != tc.want {
			t.Errorf("%s: mode %v, want %v", tc.path, fi.Mode(), tc.want)
		}
	}
}

// TestFullLogDisk runs with --log-dir on a 64 KiB tmpfs and has the board
// print 200 KB: the run goes on to its end (finally runs), hilrun warns as
// it happens, and the run ends as a bench error (exit 3) that names the
// file and counts the bytes lost. It needs to mount a tmpfs (root).
func TestFullLogDisk(t *testing.T) {
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs")
	os.Mkdir(logs, 0o755)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", logs).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs (needs root): %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", logs).Run() })
	seq := writeFile(t, dir, "seq.yaml", `
name: full
steps:
  - send: stream 200000
    expect: "sim> "
    timeout: 30s
  - send: echo after
    expect: after
finally:
  - exec: [sh, -c, "echo cleaned > `+filepath.Join(dir, "finally")+`"]
`)
	var out, errOut testenv.Buffer
	cmd := exec.Command(hilrunBinary(t), "run", "--sim", "--log-dir", logs, "--json", filepath.Join(dir, "r.json"), seq)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd, &out, &errOut); code != cli.ExitInfra {
		t.Fatalf("exit code %d, want 3\nstdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
	}
	if b, err := os.ReadFile(filepath.Join(dir, "finally")); err != nil || string(b) != "cleaned\n" {
		t.Errorf("finally did not run: %q %v", b, err)
	}
	warned := regexp.MustCompile(`hilrun: console log \S+/console\.log: no space left on device: what follows is lost`)
	want := regexp.MustCompile(`console log \S+/console\.log: \d+ of \d+ bytes lost: no space left on device`)
	if !warned.MatchString(errOut.String()) {
		t.Errorf("no warning naming the log file and the bytes lost:\n%s", errOut.String())
	}
	if !want.MatchString(out.String()) || !strings.Contains(out.String(), "ERROR full") {
		t.Errorf("the summary does not say the log is incomplete:\n%s", out.String())
	}
	b, err := os.ReadFile(filepath.Join(dir, "r.json"))
	if err != nil || !want.Match(b) {
		t.Errorf("the JSON report does not say the log is incomplete: %v\n%s", err, b)
	}
}

// running reports whether process pid exists and is not a zombie (one
// whose parent died is reaped by PID 1, which in a container may never
// happen).
func running(pid string) bool {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// TestKilledHilrunLeavesNoGrandchildren kills hilrun with SIGKILL while an
// exec step's shell waits on a background sleep: the sleep, a grandchild
// that the parent-death signal of its group leader would not reach, is
// gone too.
func TestKilledHilrunLeavesNoGrandchildren(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	dir := t.TempDir()
	marker := fmt.Sprintf("1000.%d", os.Getpid())
	seq := writeFile(t, dir, "seq.yaml", `
steps:
  - exec: [sh, -c, 'sleep `+marker+` & echo started; wait']
    timeout: 600s
`)
	var out, errOut testenv.Buffer
	cmd := exec.Command(hilrunBinary(t), "run", "-v", seq)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var sleep string
	waitFor(t, "the background sleep to start", func() bool {
		if strings.Contains(out.String(), "started") {
			sleep = pgrep(t, "^sleep "+marker)
		}
		return sleep != ""
	})
	t.Cleanup(func() {
		if n, err := strconv.Atoi(sleep); err == nil && running(sleep) {
			syscall.Kill(n, syscall.SIGKILL)
		}
	})
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	waitFor(t, "the background sleep to be gone", func() bool { return !running(sleep) })
}

// TestReconnectNeverReturns unplugs a board with reconnect: true for good
// while a step waits: the step ends at its timeout as a disconnection, a
// bench error (exit 3), not as the board's failure to answer.
func TestReconnectNeverReturns(t *testing.T) {
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
  - expect: never printed
    timeout: 2s
`)
	var out, errOut testenv.Buffer
	cmd := exec.Command(hilrunBinary(t), "run", seq)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first step to pass", func() bool { return strings.Contains(out.String(), "echo before") })
	b.Unplug()
	if code := waitExit(t, cmd, &out, &errOut); code != cli.ExitInfra {
		t.Fatalf("exit code %d, want 3\nstdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "device disconnected") || !strings.Contains(out.String(), "has not come back") {
		t.Errorf("the step does not say the device disconnected:\n%s", out.String())
	}
}

// TestTwoSignalsKeepReports interrupts a run, then cuts its finally steps
// short: the reports are still written.
func TestTwoSignalsKeepReports(t *testing.T) {
	dir := t.TempDir()
	seq := writeFile(t, dir, "seq.yaml", `
name: twice
steps:
  - send: echo started
    expect: started
  - expect: never printed
    timeout: 60s
finally:
  - expect: never printed either
    timeout: 60s
`)
	var out, errOut testenv.Buffer
	cmd := exec.Command(hilrunBinary(t), "run", "--sim", "--json", filepath.Join(dir, "r.json"), seq)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first step to pass", func() bool { return strings.Contains(out.String(), "echo started") })
	cmd.Process.Signal(syscall.SIGINT)
	waitFor(t, "the finally step to start", func() bool { return strings.Contains(errOut.String(), "finally steps run") })
	cmd.Process.Signal(syscall.SIGINT)
	if code := waitExit(t, cmd, &out, &errOut); code != cli.ExitInterrupted {
		t.Fatalf("exit code %d, want 130\nstdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
	}
	if b, err := os.ReadFile(filepath.Join(dir, "r.json")); err != nil || !strings.Contains(string(b), `"finally.0"`) {
		t.Errorf("no JSON report with the finally step: %v\n%s", err, b)
	}
}
