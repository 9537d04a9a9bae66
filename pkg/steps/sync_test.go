package steps_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/steps"
)

func TestSyncTimeout(t *testing.T) {
	seq, err := steps.Parse("s.yaml", []byte(`
devices:
  dut: {port: /dev/ttyACM0, prompt: "sim> ", sync_timeout: 30s}
  aux: {port: /dev/ttyUSB0, prompt: "=> "}
steps:
  - send: version
    to: dut
`), steps.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := seq.Device("dut").SyncTimeout; got != 30*time.Second {
		t.Errorf("dut sync_timeout = %s, want 30s", got)
	}
	if got := seq.Device("aux").SyncTimeout; got != 0 {
		t.Errorf("aux sync_timeout = %s, want unset", got)
	}

	// A bench file sets it too, over the sequence's.
	bench := filepath.Join(t.TempDir(), steps.BenchFile)
	if err := os.WriteFile(bench, []byte("devices:\n  dut: {port: /dev/ttyACM3, sync_timeout: 1m}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := steps.LoadBench(files.Anywhere(), bench)
	if err != nil {
		t.Fatal(err)
	}
	seq, err = steps.Bind(seq, steps.Binding{Bench: b})
	if err != nil {
		t.Fatal(err)
	}
	if got := seq.Device("dut").SyncTimeout; got != time.Minute {
		t.Errorf("bound sync_timeout = %s, want 1m", got)
	}
}

func TestSyncTimeoutErrors(t *testing.T) {
	for _, tt := range []struct{ name, src, want string }{
		{"bare number", "devices:\n  d: {port: /dev/null, prompt: '> ', sync_timeout: 10}\nsteps: [{send: x}]\n", `a.yaml:2:52: sync_timeout must be a duration with a unit`},
		{"negative", "devices:\n  d: {port: /dev/null, prompt: '> ', sync_timeout: -1s}\nsteps: [{send: x}]\n", `a.yaml:2:52: sync_timeout: "-1s" is not a duration`},
		{"not on a step", "steps:\n  - send: x\n    sync_timeout: 1s\n", `a.yaml:3:5: unknown key "sync_timeout" in a send step`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := steps.Parse("a.yaml", []byte(tt.src), steps.LoadOptions{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want %s", err, tt.want)
			}
		})
	}
}
