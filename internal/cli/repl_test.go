package cli_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/hilrun/hilrun/pkg/sim"
	"github.com/hilrun/hilrun/pkg/testenv"
)

// replSession is hilrun repl --sim running on a pty.
type replSession struct {
	t   *testing.T
	cmd *exec.Cmd
	pty *os.File

	mu   sync.Mutex
	out  bytes.Buffer
	mark int
}

func startRepl(t *testing.T, args ...string) *replSession {
	t.Helper()
	return startReplWith(t, append([]string{"--sim"}, args...)...)
}

// startReplWith runs hilrun repl with exactly args.
func startReplWith(t *testing.T, args ...string) *replSession {
	t.Helper()
	cmd := exec.Command(hilrunBinary(t), append([]string{"repl"}, args...)...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "HILRUN_HISTORY="+filepath.Join(cmd.Dir, "history"), "TERM=xterm", "TMPDIR="+cmd.Dir)
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 200})
	if err != nil {
		t.Fatal(err)
	}
	r := &replSession{t: t, cmd: cmd, pty: f}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			r.mu.Lock()
			r.out.Write(buf[:n])
			r.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		f.Close()
	})
	r.waitFor("hilrun> ")
	return r
}

// waitFor waits until s appears in the output after the last match.
func (r *replSession) waitFor(s string) {
	r.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r.mu.Lock()
		out := r.out.String()
		r.mu.Unlock()
		if i := strings.Index(out[r.mark:], s); i >= 0 {
			r.mark += i + len(s)
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("timed out waiting for %q; output:\n%s", s, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (r *replSession) typ(s string) {
	r.t.Helper()
	if _, err := r.pty.Write([]byte(s)); err != nil {
		r.t.Fatal(err)
	}
}

func (r *replSession) quit() {
	r.t.Helper()
	r.typ(":quit\r")
	done := make(chan error, 1)
	go func() { done <- r.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			r.t.Fatalf("hilrun repl exited with %v", err)
		}
	case <-time.After(15 * time.Second):
		r.t.Fatal("hilrun repl did not exit after :quit")
	}
}

func TestReplLiveOutputAndQuit(t *testing.T) {
	r := startRepl(t)
	r.typ("send echo hi\r")
	r.waitFor("hi\x1b[0m")
	// Output that arrives between commands still shows, and a standalone
	// expect in a later line finds it.
	r.typ("expect hi\r")
	// The step passes, whenever it started: on a busy machine its offset
	// is not always +0.000s.
	r.waitFor("✓ [+")
	r.waitFor("s] step 2    expect  hi")
	r.quit()
}

func TestReplCompletion(t *testing.T) {
	r := startRepl(t)
	r.typ("se\t")
	r.waitFor("send ")
	r.typ("version\r")
	r.waitFor("console│")
	r.quit()
}

func TestReplCtrlCCancelsStep(t *testing.T) {
	r := startRepl(t)
	r.typ("expect never-printed 60s\r")
	// Ctrl-C before the step runs only clears the empty line: press it
	// until the step is cancelled, however long the step takes to start.
	deadline := time.Now().Add(20 * time.Second)
	for {
		r.typ("\x03")
		time.Sleep(100 * time.Millisecond)
		r.mu.Lock()
		cancelled := strings.Contains(r.out.String()[r.mark:], "step cancelled")
		r.mu.Unlock()
		if cancelled || time.Now().After(deadline) {
			break
		}
	}
	r.waitFor("step cancelled")
	r.waitFor("hilrun> ")
	r.typ("send echo still here\r")
	r.waitFor("still here\x1b[0m")
	r.quit()
}

func TestReplRecordValidatesAndRuns(t *testing.T) {
	r := startRepl(t)
	r.typ("send echo hello\r")
	r.waitFor("hello\x1b[0m")
	r.typ("{send: version, expect: hilrun}\r")
	r.waitFor("✓")
	r.waitFor("send    version")
	r.typ("delay 10ms\r")
	r.waitFor("10ms")
	r.typ(":record --expects rec.yaml\r")
	r.waitFor("wrote rec.yaml")
	r.quit()
	file := filepath.Join(r.cmd.Dir, "rec.yaml")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded:\n%s", data)
	if !strings.Contains(string(data), "expect: hello") {
		t.Errorf("the reply was not recorded as an expect:\n%s", data)
	}
	// The virtual board's ELF file is a temporary copy, gone after the
	// session: a recording that named it would name nothing.
	if strings.Contains(string(data), "elf:") {
		t.Errorf("the virtual board's temporary ELF file was recorded:\n%s", data)
	}
	for _, args := range [][]string{{"validate", file}, {"run", "--sim", file}} {
		out, err := exec.Command(hilrunBinary(t), args...).CombinedOutput()
		if err != nil {
			t.Errorf("hilrun %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// TestReplSurvivesUnplug unplugs the board under a session: the REPL says
// so, says when it is back, and the session goes on with the device.
func TestReplSurvivesUnplug(t *testing.T) {
	link := filepath.Join(t.TempDir(), "ttyBOARD")
	b := sim.New(sim.Options{Link: link})
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	r := startReplWith(t, "--port", "console="+link)
	r.typ("send echo before\r")
	r.waitFor("before")
	if err := b.Unplug(); err != nil {
		t.Fatal(err)
	}
	r.waitFor("device console disconnected")
	if err := b.Replug(); err != nil {
		t.Fatal(err)
	}
	r.waitFor("device console is back")
	r.typ("send echo after\r")
	r.waitFor("after")
	r.quit()
}

// At the bench: a picture of the virtual board, a host command, and a
// reset through modem lines the pty does not have, said plainly.
func TestReplBenchControl(t *testing.T) {
	testenv.NeedTool(t, "ffmpeg", "apt-get install ffmpeg")
	r := startRepl(t)
	r.typ("snap board\r")
	r.waitFor("board.png")
	r.typ("exec echo from-the-host\r")
	r.waitFor("exec│ from-the-host")
	r.typ("reset_sequence esp32\r")
	r.waitFor("has no modem control lines")
	r.typ("send echo still here\r")
	r.waitFor("still here\x1b[0m")
	r.quit()
}

// A typed power step without a board switches the bench's only one, and a
// file run with run FILE takes the bench's power and the board's camera.
func TestReplPowerAndRunFileUseTheBench(t *testing.T) {
	testenv.NeedTool(t, "ffmpeg", "apt-get install ffmpeg")
	dir := t.TempDir()
	state := filepath.Join(dir, "relay.state")
	bench := writeFile(t, dir, "bench.yaml", `power:
  dut: {on: [sh, -c, "echo on >> `+state+`"], off: [sh, -c, "echo off >> `+state+`"]}
`)
	file := writeFile(t, dir, "file.yaml", "steps:\n  - power: {device: dut, action: \"on\"}\n  - capture: true\n    label: from_file\n")
	r := startReplWith(t, "--sim", "--bench", bench)
	r.typ("power off\r")
	r.waitFor("power   off dut")
	r.typ("run " + file + "\r")
	r.waitFor("from_file.png")
	r.quit()
	if b, _ := os.ReadFile(state); string(b) != "off\non\n" {
		t.Errorf("the relay saw %q", b)
	}
}
