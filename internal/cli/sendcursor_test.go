package cli_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/sim"
)

// bannerLen is the length of the virtual board's boot banner and prompt,
// which wait in the kernel until hilrun opens the port.
var bannerLen = len("hilrun virtual board\r\nhilrun-sim 1.0.0\r\nboot: ok\r\n\r\nsim> ")

// runOnBoard runs seq with hilrun, its device dev on a virtual board
// powered on before, and returns hilrun's output and the steps of its
// JSON report.
func runOnBoard(t *testing.T, dev, seq string) (string, []reportStep, error) {
	t.Helper()
	b := sim.New(sim.Options{})
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	dir := t.TempDir()
	file := filepath.Join(dir, "seq.yaml")
	if err := os.WriteFile(file, []byte(seq), 0o644); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(dir, "report.json")
	out, err := exec.Command(hilrunBinary(t), "run", "--port", dev+"="+b.SerialPath(), "--json", report, file).CombinedOutput()
	data, rerr := os.ReadFile(report)
	if rerr != nil {
		t.Fatalf("no report: %v\n%s", rerr, out)
	}
	var r struct {
		Sequences []struct {
			Steps []reportStep `json:"steps"`
		} `json:"sequences"`
	}
	if err := json.Unmarshal(data, &r); err != nil || len(r.Sequences) != 1 {
		t.Fatalf("report: %v\n%s", err, data)
	}
	return string(out), r.Sequences[0].Steps, err
}

type reportStep struct {
	Path    string         `json:"path"`
	Status  string         `json:"status"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data"`
}

// On the virtual board, whose banner and prompt wait in the kernel until
// the port opens, a send's expect sees only what the board printed after
// the send: a line of the banner does not pass it, the version command's
// own reply does, and a later send's reply is not the previous one's.
func TestVirtualBoardReplies(t *testing.T) {
	for _, tc := range []struct {
		name, seq string
		pass      bool
		message   string
	}{
		{"stale banner line", `
devices: {dut: {prompt: "sim> "}}
steps:
  - send: version
    expect: "boot: ok"
`, false, `without printing "boot: ok"; received "hilrun-sim 1.0.0\r\nsim> "`},
		{"honest", `
devices: {dut: {prompt: "sim> "}}
steps:
  - send: version
    expect: {regex: 'hilrun-sim (\d+\.\d+\.\d+)'}
  - send: echo one
    expect: {regex: '^one'}
  - send: led on
    expect: LED on
  - send: status
    expect: "led: on"
`, true, ""},
		{"mistyped command", `
devices: {dut: {prompt: "sim> "}}
steps:
  - send: versoin
    expect: {regex: 'hilrun-sim (\d+\.\d+\.\d+)'}
`, false, "unknown command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, steps, err := runOnBoard(t, "dut", tc.seq)
			if (err == nil) != tc.pass {
				t.Fatalf("hilrun run: %v, want passed %v\n%s", err, tc.pass, out)
			}
			if tc.message != "" && !strings.Contains(out, tc.message) {
				t.Errorf("the failure does not say %q:\n%s", tc.message, out)
			}
			var last float64
			for _, s := range steps {
				off, ok := s.Data["offset"].(float64)
				if !ok {
					continue
				}
				if off < float64(bannerLen) || off < last {
					t.Errorf("step %s matched at offset %v: in the banner (%d bytes) or a previous reply (from %v)", s.Path, off, bannerLen, last)
				}
				last = off
			}
		})
	}
}

// The demo sequence passes without its first step, the empty send that
// gets a fresh prompt: the banner printed before the port opened is not
// taken for a reply. A version that does not answer still fails.
func TestSmokeWithoutItsFirstStep(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "sequences", "sim", "smoke.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	src := string(data)
	first := strings.Index(src, "  - name: wait for the prompt")
	next := strings.Index(src, "  - group: identify")
	if first < 0 || next < first {
		t.Fatalf("smoke.yaml no longer begins with its empty send:\n%s", src)
	}
	src = src[:first] + src[next:]
	if out, _, err := runOnBoard(t, "console", src); err != nil {
		t.Fatalf("smoke.yaml without its first step: %v\n%s", err, out)
	}
	broken := strings.Replace(src, "send: version", "send: versoin", 1)
	out, _, err := runOnBoard(t, "console", broken)
	if err == nil || !strings.Contains(out, "read the firmware version") || !strings.Contains(out, "unknown command") {
		t.Errorf("a mistyped version command: %v, want the version step to fail on the board's answer\n%s", err, out)
	}
}

// A REPL session's first send on a device with a prompt is synced, as a
// run of the recording will be: :record --expects records what the
// command printed, not the prompt, and the recording replays.
func TestReplRecordsTheSyncedFirstSend(t *testing.T) {
	b := sim.New(sim.Options{})
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	bench := writeFile(t, t.TempDir(), "sim.bench.yaml", "devices:\n  console: {port: "+b.SerialPath()+", prompt: \"sim> \"}\n")
	r := startReplWith(t, "--bench", bench)
	r.typ("send version\r")
	r.waitFor("✓")
	r.waitFor("send    version")
	r.typ(":record --expects rec.yaml\r")
	r.waitFor("wrote rec.yaml")
	r.quit()
	data, err := os.ReadFile(filepath.Join(r.cmd.Dir, "rec.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "expect: hilrun-sim 1.0.0") {
		t.Errorf("the first send's reply was not recorded as its expect:\n%s", data)
	}
}
