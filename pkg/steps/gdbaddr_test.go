package steps_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/steps"
)

func TestParseGDBTarget(t *testing.T) {
	for _, tc := range []struct {
		name, in     string
		addr, attach string
		err          string
	}{
		{name: "address alone", in: "127.0.0.1:2345", addr: "127.0.0.1:2345"},
		{name: "serial port", in: "/dev/ttyACM0", addr: "/dev/ttyACM0"},
		{name: "running", in: "127.0.0.1:2345?attach=running", addr: "127.0.0.1:2345", attach: "running"},
		{name: "halted on a serial port", in: "/dev/ttyACM0?attach=halted", addr: "/dev/ttyACM0", attach: "halted"},
		{name: "auto", in: "localhost:1234?attach=auto", addr: "localhost:1234", attach: "auto"},
		{name: "empty query", in: "localhost:1234?", addr: "localhost:1234"},
		{name: "not an address", in: "qemu?attach=running", err: `want HOST:PORT, like 127.0.0.1:1234, or the path of a serial port, like /dev/ttyACM0, or of a Unix socket, found "qemu"`},
		{name: "unknown mode", in: "h:1?attach=runing", err: `attach=runing in "h:1?attach=runing": want running, halted or auto (did you mean "running"?)`},
		{name: "unknown key", in: "h:1?atach=running", err: `unknown setting "atach" after ? in "h:1?atach=running": the only one is attach=running|halted|auto (did you mean "attach"?)`},
		{name: "mode twice", in: "h:1?attach=running&attach=halted", err: `attach is given 2 times in "h:1?attach=running&attach=halted"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, attach, err := steps.ParseGDBTarget(tc.in)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error %v, want %s", err, tc.err)
				}
				return
			}
			if err != nil || addr != tc.addr || attach != tc.attach {
				t.Errorf("got %q, %q, %v; want %q, %q", addr, attach, err, tc.addr, tc.attach)
			}
		})
	}
}

// A probe's gdb: takes an address, or {address, attach}; the file's
// errors name where.
func TestGDBProbeForms(t *testing.T) {
	for _, tc := range []struct {
		name, probe  string
		addr, attach string
		err          string
	}{
		{name: "plain address is auto", probe: "{gdb: 127.0.0.1:2345}", addr: "127.0.0.1:2345"},
		{name: "mapping", probe: "{gdb: {address: 127.0.0.1:2345, attach: running}}", addr: "127.0.0.1:2345", attach: "running"},
		{name: "mapping without a mode", probe: "{gdb: {address: /dev/ttyACM0}}", addr: "/dev/ttyACM0"},
		{name: "query in the string", probe: "{gdb: '127.0.0.1:2345?attach=halted'}", addr: "127.0.0.1:2345", attach: "halted"},
		{name: "unknown mode", probe: "{gdb: {address: 127.0.0.1:2345, attach: stopped}}",
			err: `s.yaml:2:46: attach must be one of running, halted, auto, found "stopped"`},
		{name: "unknown key", probe: "{gdb: {adress: 127.0.0.1:2345}}",
			err: `s.yaml:2:13: unknown key "adress" in gdb of probe q (did you mean "address"?)`},
		{name: "no address", probe: "{gdb: {attach: running}}",
			err: `s.yaml:2:12: gdb of probe q needs an address: {address: HOST:PORT, attach: running}`},
		{name: "address that is none", probe: "{gdb: {address: qemu}}",
			err: `s.yaml:2:22: gdb address must be HOST:PORT of a GDB remote stub`},
		{name: "plain address that is none", probe: "{gdb: qemu}",
			err: `s.yaml:2:12: gdb must be HOST:PORT of a GDB remote stub`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seq, err := steps.Parse("s.yaml", []byte("probes:\n  q: "+tc.probe+"\nsteps:\n  - {halt: true}\n"), steps.LoadOptions{})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p := seq.Probe("q"); p.GDB != tc.addr || p.GDBAttach != tc.attach || p.Backend() != steps.BackendGDB {
				t.Errorf("probe q = %+v, want gdb %q attach %q", p, tc.addr, tc.attach)
			}
		})
	}
}

// Binding a probe to a stub gives it the attach mode the binding names,
// and keeps the sequence's when it names none: the mode is the target's,
// the address the bench's.
func TestGDBAttachBinding(t *testing.T) {
	dir := t.TempDir()
	seq, err := steps.Parse(filepath.Join(dir, "s.yaml"), []byte("probes:\n  q: {gdb: {address: 127.0.0.1:1, attach: running}}\n  r: {gdb: 127.0.0.1:2}\nsteps:\n  - {halt: true, probe: q}\n  - {halt: true, probe: r}\n"), steps.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bench := filepath.Join(dir, steps.BenchFile)
	if err := os.WriteFile(bench, []byte("probes:\n  q: {gdb: 127.0.0.1:3}\n  r: {gdb: {address: 127.0.0.1:4, attach: halted}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := steps.LoadBench(files.Anywhere(), bench)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		binding steps.Binding
		q, r    [2]string // address, attach mode
	}{
		{"the sequence alone", steps.Binding{}, [2]string{"127.0.0.1:1", "running"}, [2]string{"127.0.0.1:2", ""}},
		{"a bench file", steps.Binding{Bench: b}, [2]string{"127.0.0.1:3", "running"}, [2]string{"127.0.0.1:4", "halted"}},
		{"flags", steps.Binding{GDBs: map[string]string{"q": "127.0.0.1:5", "r": "127.0.0.1:6?attach=running"}},
			[2]string{"127.0.0.1:5", "running"}, [2]string{"127.0.0.1:6", "running"}},
		{"flag over a bench file", steps.Binding{Bench: b, GDBs: map[string]string{"r": "127.0.0.1:7?attach=auto"}},
			[2]string{"127.0.0.1:3", "running"}, [2]string{"127.0.0.1:7", "auto"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bound, err := steps.Bind(seq, tc.binding)
			if err != nil {
				t.Fatal(err)
			}
			for name, want := range map[string][2]string{"q": tc.q, "r": tc.r} {
				if p := bound.Probe(name); p.GDB != want[0] || p.GDBAttach != want[1] {
					t.Errorf("probe %s: gdb %q attach %q, want %q %q", name, p.GDB, p.GDBAttach, want[0], want[1])
				}
			}
		})
	}
	if p := seq.Probe("r"); p.GDB != "127.0.0.1:2" || p.GDBAttach != "" {
		t.Errorf("binding changed the loaded sequence: %+v", p)
	}
	_, err = steps.Bind(seq, steps.Binding{GDBs: map[string]string{"q": "127.0.0.1:5?attach=later"}})
	if want := `bind probe q to the GDB remote stub "127.0.0.1:5?attach=later": attach=later in "127.0.0.1:5?attach=later": want running, halted or auto`; err == nil || err.Error() != want {
		t.Errorf("bad mode in a flag: %v\nwant %s", err, want)
	}
}
