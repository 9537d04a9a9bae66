package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/internal/cli"
	"github.com/hilrun/hilrun/pkg/sim"
)

// Step numbers count through the session, as :steps lists them, instead
// of every line being step 0.
func TestReplStepNumbersCount(t *testing.T) {
	r := startRepl(t)
	r.typ("send echo one\r")
	r.waitFor("step 1    send")
	r.typ("send echo two\r")
	r.waitFor("step 2    send")
	r.typ("{group: g, steps: [{send: echo three}]}\r")
	r.waitFor("step 3.0  send")
	r.quit()
}

// --log-dir keeps the session's console log, as picocom's --logfile.
func TestReplLogDir(t *testing.T) {
	r := startRepl(t, "--log-dir", "logs")
	r.typ("send echo kept-in-the-log\r")
	r.waitFor("kept-in-the-log\x1b[0m")
	r.quit()
	logs, err := filepath.Glob(filepath.Join(r.cmd.Dir, "logs", "*-repl", "*"))
	if err != nil || len(logs) == 0 {
		t.Fatalf("no console log under logs/: %v", err)
	}
	found := false
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		found = found || strings.Contains(string(b), "kept-in-the-log")
	}
	if !found {
		t.Errorf("no log among %v holds the session's output", logs)
	}
}

// Under --sim the probe gets the virtual board's firmware image, so
// symbols resolve without a file naming it.
func TestReplSimSymbols(t *testing.T) {
	r := startRepl(t)
	r.typ("write blink 1\r")
	r.waitFor("✓")
	r.typ("read blink\r")
	r.waitFor("blink")
	r.waitFor("0x00000001")
	r.typ("send status\r")
	r.waitFor("blink: 1")
	// A recording leaves the session's firmware image out: its file goes
	// with the session, and a replay under --sim is given it again.
	rec := filepath.Join(r.cmd.Dir, "rec.yaml")
	r.typ(":record " + rec + "\r")
	r.waitFor("wrote")
	r.quit()
	src, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(src), "elf:") {
		t.Errorf("the recording names the session's firmware image:\n%s", src)
	}
}

// An image loaded into RAM through the held probe, under --sim.
func TestReplUploadLoad(t *testing.T) {
	needOpenOCD(t)
	r := startRepl(t)
	img := filepath.Join(r.cmd.Dir, "img.bin")
	if err := os.WriteFile(img, []byte{0x78, 0x56, 0x34, 0x12, 0xef, 0xbe, 0xad, 0xde}, 0o644); err != nil {
		t.Fatal(err)
	}
	r.typ("{upload: {openocd: {file: " + img + ", method: load, offset: 0x20008000}}}\r")
	r.waitFor("✓")
	r.typ("mdw 0x20008000 2\r")
	r.waitFor("0x12345678 0xdeadbeef")
	r.quit()
}

// --sim binds only what is still unbound: a device --port names stays on
// that port.
func TestReplSimKeepsPort(t *testing.T) {
	link := filepath.Join(t.TempDir(), "ttyBOARD")
	b := sim.New(sim.Options{Link: link})
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	r := startReplWith(t, "--sim", "--port", "console="+link)
	r.quit()
	r.mu.Lock()
	out := r.out.String()
	r.mu.Unlock()
	if !strings.Contains(out, "connected to device console ("+link+")") {
		t.Errorf("the session's console is not the board --port names:\n%s", out)
	}
}

// A script's exit code says how its lines went.
func TestReplScriptExitCodes(t *testing.T) {
	t.Setenv("HILRUN_HISTORY", filepath.Join(t.TempDir(), "history"))
	for _, tc := range []struct {
		name, script string
		want         int
	}{
		{"passed", "send version\nexpect hilrun-sim\n", cli.ExitPassed},
		{"failed", "send version\nexpect not-printed 200ms\nsend echo after\n", cli.ExitFailed},
		{"bad line", ":nope\nsend version\n", cli.ExitInvalid},
		{"bad line and failure", "expect not-printed 100ms\n{sned: x}\n", cli.ExitInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := cli.Main([]string{"repl", "--sim"}, strings.NewReader(tc.script), &out, &errOut)
			if code != tc.want {
				t.Errorf("exit %d, want %d\n%s%s", code, tc.want, out.String(), errOut.String())
			}
			if strings.Contains(out.String(), "\x1b") {
				t.Errorf("escape codes in a script's output:\n%q", out.String())
			}
		})
	}
}
