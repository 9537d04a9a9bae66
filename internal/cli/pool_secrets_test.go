package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/sim"
)

// poolSecretSeq sends a secret from its bench and one from --secret, says
// which bench's value it got through a command (the part before the
// value's first '-'), and fails an expect after sending one, so that
// the reports show what was received.
const poolSecretSeq = `name: NAME
secrets: [wifi_psk, api_token]
on_failure: continue
devices: {console: }
steps:
  - send: echo join ${wifi_psk} ${api_token}
    expect: join
  - exec: [sh, -c, 'echo side=$${0%%-*}', '${wifi_psk}']
    expect: {regex: 'side=(\w+)'}
    save: side
  - send: echo ${wifi_psk} again
    expect: nope
    timeout: 1s
`

// simPorts starts n virtual boards for the test and returns their ports.
func simPorts(t *testing.T, n int) []string {
	t.Helper()
	var links []string
	for range n {
		b := sim.New(sim.Options{})
		if err := b.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		links = append(links, b.SerialPath())
	}
	return links
}

// TestPoolSecrets: in a pool run, each bench's runs get the secrets its
// own bench gives (an inline bench's and a bench file's) and those of
// --secret; no file the run wrote (logs, JSON, JUnit, HTML, Allure) and
// nothing it printed holds a value; a bench that lacks one fails before
// the run, naming it.
func TestPoolSecrets(t *testing.T) {
	const leftPSK, rightPSK = "left-psk-4711", "right-psk-0815"
	links := simPorts(t, 2)
	in := t.TempDir()
	writeFile(t, in, "right.psk", rightPSK+"\n")
	writeFile(t, in, "right.bench.yaml", "devices: {console: "+links[1]+"}\nsecrets:\n  wifi_psk: file:right.psk\n")
	pool := writeFile(t, in, "lab.pool.yaml", `benches:
  - name: left
    devices: {console: `+links[0]+`}
    secrets: {wifi_psk: "env:HILRUN_TEST_LEFT_PSK"}
  - name: right
    bench: right.bench.yaml
`)
	for i := range 2 {
		writeFile(t, in, fmt.Sprintf("psk-%d.yaml", i+1), strings.Replace(poolSecretSeq, "NAME", fmt.Sprintf("psk-%d", i+1), 1))
	}
	seqs := []string{filepath.Join(in, "psk-1.yaml"), filepath.Join(in, "psk-2.yaml")}
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	t.Setenv("HILRUN_TEST_TOKEN", secretToken)

	for _, cmd := range []string{"run", "validate"} {
		code, stdout, stderr := hilrun(append([]string{cmd, "--pool", pool, "--secret", "api_token=env:HILRUN_TEST_TOKEN"}, seqs...)...)
		if want := "lab.pool.yaml:4:25: secret wifi_psk: the environment variable HILRUN_TEST_LEFT_PSK is not set (on bench left)\n"; code != 2 || !strings.HasSuffix(stderr, want) || strings.Contains(stdout, "join") {
			t.Fatalf("%s: a bench without its secret: exit %d, want 2 and %q\n%s%s", cmd, code, want, stdout, stderr)
		}
	}

	t.Setenv("HILRUN_TEST_LEFT_PSK", leftPSK)
	out := t.TempDir()
	code, stdout, stderr := hilrun(append([]string{"run", "--pool", pool, "--secret", "api_token=env:HILRUN_TEST_TOKEN",
		"--log-dir", filepath.Join(out, "logs"), "--json", filepath.Join(out, "r.json"), "--junit", filepath.Join(out, "r.xml"),
		"--html", filepath.Join(out, "r.html"), "--allure", filepath.Join(out, "allure")}, seqs...)...)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (an expect fails)\n%s\n%s", code, stdout, stderr)
	}
	written := map[string]string{"stdout": stdout, "stderr": stderr}
	readWritten(t, out, written)
	noSecretIn(t, written, leftPSK, rightPSK, secretToken)
	logs := 0
	for name, text := range written {
		if strings.HasSuffix(name, "console.log") {
			logs++
			if !strings.Contains(text, "join ************* ************") && !strings.Contains(text, "join ************** ************") {
				t.Errorf("%s does not mask the secrets:\n%s", name, text)
			}
		}
	}
	if logs != 2 {
		t.Errorf("%d console logs, want one per sequence", logs)
	}
	var rep struct {
		Sequences []struct {
			Name, Bench string
			Steps       []struct {
				Saved map[string]any `json:"saved"`
			} `json:"steps"`
		} `json:"sequences"`
	}
	if err := json.Unmarshal([]byte(written[filepath.Join(out, "r.json")]), &rep); err != nil {
		t.Fatal(err)
	}
	benches := map[string]bool{}
	for _, s := range rep.Sequences {
		benches[s.Bench] = true
		side := ""
		for _, st := range s.Steps {
			if v, ok := st.Saved["side"].(string); ok {
				side = v
			}
		}
		if side != s.Bench {
			t.Errorf("%s ran on bench %s with the secret of bench %q", s.Name, s.Bench, side)
		}
	}
	if !benches["left"] || !benches["right"] {
		t.Errorf("the sequences ran on benches %v, want left and right", benches)
	}
	if !strings.Contains(written[filepath.Join(out, "r.json")], "***wifi_psk***") {
		t.Error("the JSON report never names the secret")
	}
}

// TestPoolQuarantineOneBench: a quarantine entry with benches: [left]
// skips its group on bench left only; on bench right it runs.
func TestPoolQuarantineOneBench(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	pool := writeFile(t, dir, "lab.pool.yaml", "benches:\n  - {name: left, sim: true}\n  - {name: right, sim: true}\n")
	q := writeFile(t, dir, "quarantine.yaml", "- name: flaky\n  reason: \"hangs on the left bench, #42\"\n  benches: [left]\n")
	var seqs []string
	for i := range 2 {
		seqs = append(seqs, writeFile(t, dir, fmt.Sprintf("q-%d.yaml", i+1), fmt.Sprintf("name: q-%d\nsteps:\n  - group: flaky\n    steps:\n      - {send: echo flaky, expect: flaky}\n  - {send: echo after, expect: after}\n", i+1)))
	}
	jsonPath := filepath.Join(dir, "r.json")
	code, stdout, stderr := hilrun(append([]string{"run", "--pool", pool, "--quarantine", q, "--json", jsonPath}, seqs...)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	data, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Sequences []struct {
			Name, Bench string
			Steps       []struct {
				Name, Kind, Status, Message string
			} `json:"steps"`
		} `json:"sequences"`
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, s := range rep.Sequences {
		for _, st := range s.Steps {
			if st.Name == "flaky" && st.Kind == "group" {
				seen[s.Bench] = st.Status + " " + st.Message
			}
		}
	}
	if !strings.HasPrefix(seen["left"], "skipped") || !strings.Contains(seen["left"], "quarantined: hangs on the left bench, #42") || seen["right"] != "passed " {
		t.Errorf("the flaky group on each bench: %q\n%s", seen, data)
	}
}

// TestPoolQuarantinedNeedsNoSecret: a sequence quarantined on one bench of
// a pool sends nothing there, so that bench need not give its secret:
// the checks before the run pass, and the run does.
func TestPoolQuarantinedNeedsNoSecret(t *testing.T) {
	links := simPorts(t, 2)
	dir := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	t.Setenv("HILRUN_TEST_RIGHT_PSK", "right-psk-0815")
	pool := writeFile(t, dir, "lab.pool.yaml", "benches:\n  - name: left\n    devices: {console: "+links[0]+"}\n"+
		"  - name: right\n    devices: {console: "+links[1]+"}\n    secrets: {wifi_psk: \"env:HILRUN_TEST_RIGHT_PSK\"}\n")
	q := writeFile(t, dir, "quarantine.yaml", "- name: join\n  reason: \"no network on the left bench\"\n  benches: [left]\n")
	seq := writeFile(t, dir, "join.yaml", "name: join\nsecrets: [wifi_psk]\nsteps:\n  - {send: \"echo join ${wifi_psk}\", expect: join}\n")
	for _, cmd := range []string{"validate", "run"} {
		if code, stdout, stderr := hilrun(cmd, "--pool", pool, "--quarantine", q, seq); code != 0 {
			t.Errorf("%s: exit %d, want 0 (bench left does not run join)\n%s%s", cmd, code, stdout, stderr)
		}
	}
	if code, stdout, stderr := hilrun("run", "--pool", pool, seq); code != 2 || !strings.Contains(stderr, "secret wifi_psk has no value") {
		t.Errorf("without the quarantine: exit %d, want 2 (bench left lacks the secret)\n%s%s", code, stdout, stderr)
	}
}
