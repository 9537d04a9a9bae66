package repl

import (
	"os"
	"path/filepath"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

// :record writes a probe's GDB attach mode with its address, so that the
// recorded sequence attaches as the session did.
func TestRecordGDBAttach(t *testing.T) {
	seq, err := steps.Parse("s.yaml", []byte("probes:\n  q: {gdb: {address: '127.0.0.1:2345', attach: running}}\n  r: {gdb: '127.0.0.1:2346'}\nsteps:\n  - {halt: true, probe: q}\n"), steps.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var step yaml.Node
	if err := yaml.Unmarshal([]byte("{halt: true, probe: q}"), &step); err != nil {
		t.Fatal(err)
	}
	s := &Session{opts: Options{Seq: seq, RecordPorts: true}, history: []entry{{node: step.Content[0], status: runner.Passed, cursor: -1}}}
	path := filepath.Join(t.TempDir(), "rec.yaml")
	if err := s.record(path, false); err != nil {
		t.Fatal(err)
	}
	again, err := steps.Load(path, steps.LoadOptions{})
	if err != nil {
		b, _ := os.ReadFile(path)
		t.Fatalf("%v\n%s", err, b)
	}
	for name, want := range map[string][2]string{"q": {"127.0.0.1:2345", "running"}, "r": {"127.0.0.1:2346", ""}} {
		if p := again.Probe(name); p == nil || p.GDB != want[0] || p.GDBAttach != want[1] {
			t.Errorf("recorded probe %s = %+v, want gdb %s attach %q", name, p, want[0], want[1])
		}
	}
}
