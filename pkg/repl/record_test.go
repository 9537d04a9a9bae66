package repl

import (
	"os"
	"path/filepath"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/hilrun/hilrun/pkg/gate/files"
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
	s := &Session{opts: Options{Seq: seq, Given: seq, Files: files.Anywhere()}, history: []entry{{node: step.Content[0], status: runner.Passed, cursor: -1}}}
	path := filepath.Join(t.TempDir(), "rec.yaml")
	if err := s.record(path, false); err != nil {
		t.Fatal(err)
	}
	again, err := steps.Load(files.Anywhere(), path, steps.LoadOptions{})
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

// :record keeps the bench out of the file: a port or a probe address that
// --port, --probe, --sim or a bench file bound is not written, one the
// sequence file itself gave is.
func TestRecordLeavesTheBenchOut(t *testing.T) {
	given, err := steps.Parse("s.yaml", []byte("devices:\n  a: {port: /dev/ttyACM0}\n  b:\nprobes:\n  p: {gdb: '127.0.0.1:2345'}\n  q:\nsteps:\n  - send: hi\n    to: a\n"), steps.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bound, err := steps.Bind(given, steps.Binding{Ports: map[string]string{"b": "/dev/ttyUSB9"}, GDBs: map[string]string{"q": "127.0.0.1:9999"}})
	if err != nil {
		t.Fatal(err)
	}
	var step yaml.Node
	if err := yaml.Unmarshal([]byte("{send: hi, to: a}"), &step); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		given *steps.Sequence
		want  map[string]string // device or probe: what it is bound to in the recording
	}{
		{"from a file", given, map[string]string{"a": "/dev/ttyACM0", "b": "", "p": "127.0.0.1:2345", "q": ""}},
		{"from flags alone", nil, map[string]string{"a": "", "b": "", "p": "", "q": ""}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := &Session{opts: Options{Seq: bound, Given: tt.given, Files: files.Anywhere()}, history: []entry{{node: step.Content[0], status: runner.Passed, cursor: -1}}}
			path := filepath.Join(t.TempDir(), "rec.yaml")
			if err := s.record(path, false); err != nil {
				t.Fatal(err)
			}
			again, err := steps.Load(files.Anywhere(), path, steps.LoadOptions{})
			if err != nil {
				b, _ := os.ReadFile(path)
				t.Fatalf("%v\n%s", err, b)
			}
			for _, d := range []string{"a", "b"} {
				if got := again.Device(d).Port; got != tt.want[d] {
					t.Errorf("device %s recorded with port %q, want %q", d, got, tt.want[d])
				}
			}
			for _, p := range []string{"p", "q"} {
				if got := again.Probe(p).GDB; got != tt.want[p] {
					t.Errorf("probe %s recorded with gdb %q, want %q", p, got, tt.want[p])
				}
			}
		})
	}
}
