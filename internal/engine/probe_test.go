package engine

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/steps"
)

// Every registered backend's probe spec is a key of the probe settings in
// both schemas, so that editors accept the probes hilrun can open; and
// every backend is reached by the spec of its name.
func TestBackendsAreInTheSchemas(t *testing.T) {
	for _, file := range []string{"sequence.schema.json", "bench.schema.json"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "schemas", file))
		if err != nil {
			t.Fatal(err)
		}
		var s struct {
			Defs struct {
				Probe struct {
					Properties map[string]json.RawMessage `json:"properties"`
				} `json:"probe"`
			} `json:"$defs"`
		}
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if len(s.Defs.Probe.Properties) == 0 {
			t.Fatalf("%s has no $defs.probe.properties", file)
		}
		for _, b := range Backends() {
			if _, ok := s.Defs.Probe.Properties[b.Name]; !ok {
				t.Errorf("%s: probe settings have no %q key for the %s backend", file, b.Name, b.Name)
			}
		}
	}
	for _, tc := range []struct {
		p    steps.Probe
		want string
	}{
		{steps.Probe{OpenOCD: "127.0.0.1:4444"}, steps.BackendOpenOCD},
		{steps.Probe{Launch: &steps.Launch{Config: []string{"x.cfg"}}}, steps.BackendOpenOCD},
		{steps.Probe{GDB: "127.0.0.1:1234"}, steps.BackendGDB},
	} {
		if got := tc.p.Backend(); got != tc.want {
			t.Errorf("%+v: backend %q, want %q", tc.p, got, tc.want)
		}
		if _, ok := LookupBackend(tc.want); !ok {
			t.Errorf("no backend is registered for %q", tc.want)
		}
	}
}

// Raw command steps run only where the backend takes them: openocd steps
// on OpenOCD, monitor steps on any backend with raw commands. The error
// names the step's FILE:LINE:COL.
func TestCheckRaw(t *testing.T) {
	const src = `probes:
  ocd: {openocd: "127.0.0.1:4444"}
  stub: {gdb: "127.0.0.1:1234"}
  later:
steps:
  - {openocd: targets, probe: ocd}
  - {monitor: targets, probe: ocd}
  - {monitor: info registers, probe: stub}
  - {halt: true, probe: stub}
  - {openocd: targets, probe: later}
  - group: g
    steps:
      - {openocd: reg pc, probe: stub}
`
	seq, err := steps.Parse("raw.yaml", []byte(src), steps.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	err = CheckRaw(seq)
	var el steps.ErrorList
	if !errors.As(err, &el) {
		t.Fatalf("CheckRaw = %v, want an ErrorList", err)
	}
	if len(el) != 1 || !strings.HasPrefix(el[0].Error(), "raw.yaml:13:9: an openocd step sends OpenOCD Tcl, and probe stub is a gdb probe, not OpenOCD: use a monitor step") {
		t.Errorf("CheckRaw:\n%v", err)
	}

	// A backend without raw commands refuses monitor steps too.
	err = checkRaw(seq, []Backend{{Name: steps.BackendOpenOCD, Raw: true, Tcl: true}, {Name: steps.BackendGDB}})
	if !errors.As(err, &el) || len(el) != 2 || !strings.Contains(el[0].Error(), "raw.yaml:8:5: a monitor step sends a raw command, and probe stub (gdb) takes none") {
		t.Errorf("CheckRaw without raw commands on gdb:\n%v", err)
	}
}

// An unbound probe and an OpenOCD launch without configuration are found
// before anything opens.
func TestCheckProbes(t *testing.T) {
	seq, err := steps.Parse("p.yaml", []byte("probes:\n  a:\n  b: {launch: {}}\nsteps:\n  - {halt: true, probe: a}\n  - {halt: true, probe: b}\n"), steps.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	msg := ""
	if err := CheckProbes(seq); err != nil {
		msg = err.Error()
	}
	for _, want := range []string{"p.yaml:2:3: probe a is not bound: give it openocd: HOST:PORT, launch: {config: [...]}, gdb: HOST:PORT or launch: {qemu: {...}}", "p.yaml:3:3: probe b: launch needs config files"} {
		if !strings.Contains(msg, want) {
			t.Errorf("CheckProbes does not say %q:\n%s", want, msg)
		}
	}
}

// A gdb probe opens through pkg/gdbremote: a stub that is not there is a
// clear error naming its address, never a nil session; a probe nothing
// binds says so.
func TestOpenProbeGDBBackend(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	open := OpenProbe(ProbeOptions{Gates: hostGates})
	d, err := open(context.Background(), &steps.Probe{Name: "x", GDB: addr})
	if d != nil || err == nil || !strings.Contains(err.Error(), addr) {
		t.Errorf("OpenProbe of a stub that is not there = %v, %v", d, err)
	}
	if _, err := open(context.Background(), &steps.Probe{Name: "y"}); err == nil || !strings.Contains(err.Error(), "nothing binds it") {
		t.Errorf("an unbound probe: %v", err)
	}
}

// A QEMU launch is checked before anything starts: a kernel that is not
// there, and a console device that the bench binds elsewhere, are errors
// naming the launch's FILE:LINE:COL.
func TestCheckProbesQEMU(t *testing.T) {
	dir := t.TempDir()
	kernel := filepath.Join(dir, "fw.elf")
	if err := os.WriteFile(kernel, []byte("\x7fELF"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := "devices:\n  console:\nprobes:\n  ok:\n    launch:\n      qemu: {machine: mps2-an385, kernel: fw.elf, console: console}\n  gone:\n    launch:\n      qemu: {machine: virt, bios: missing.bin}\nsteps:\n  - {send: x}\n  - {halt: true, probe: ok}\n  - {halt: true, probe: gone}\n"
	file := filepath.Join(dir, "q.yaml")
	load := func() *steps.Sequence {
		t.Helper()
		seq, err := steps.Parse(file, []byte(src), steps.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return seq
	}
	seq := load()
	if got := seq.Probe("ok").Backend(); got != steps.BackendGDB {
		t.Errorf("a QEMU launch's backend is %q, want gdb", got)
	}
	err := CheckProbes(seq)
	var el steps.ErrorList
	if !errors.As(err, &el) || len(el) != 1 || !strings.HasPrefix(el[0].Error(), file+":9:13: probe gone: qemu bios: "+filepath.Join(dir, "missing.bin")+" does not exist") {
		t.Errorf("CheckProbes:\n%v", err)
	}

	seq = load()
	seq.Device("console").Port = "/dev/ttyUSB0"
	seq.Probes = seq.Probes[:1]
	if err := CheckProbes(seq); err == nil || !strings.Contains(err.Error(), "probe ok: qemu console: device console is bound to /dev/ttyUSB0 too") {
		t.Errorf("CheckProbes with the console bound elsewhere: %v", err)
	}
}

// --qemu binds only what nothing else binds: the one device without a
// port and the probes bound to nothing, which get the kernel as their ELF
// file when it is one and they have none.
func TestReserveAndBindQEMU(t *testing.T) {
	dir := t.TempDir()
	kernel := filepath.Join(dir, "fw.elf")
	if err := os.WriteFile(kernel, []byte("\x7fELF rest"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := "devices:\n  console:\n  uart: {port: /dev/ttyUSB0}\nprobes:\n  free:\n  bound: {gdb: 10.0.0.1:3333}\n  elf: {elf: own.elf}\nsteps:\n  - {send: x, to: console}\n  - {halt: true, probe: free}\n  - {halt: true, probe: bound}\n  - {halt: true, probe: elf}\n"
	seq, err := steps.Parse(filepath.Join(dir, "r.yaml"), []byte(src), steps.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	loaded := seq
	seq, err = ReserveQEMU(loaded, kernel)
	if err != nil {
		t.Fatal(err)
	}
	if p := loaded.Probe("free"); p.GDB != "" {
		t.Errorf("ReserveQEMU changed the loaded sequence: probe free gdb %q", p.GDB)
	}
	if p := seq.Probe("free"); p.GDB != QEMUPending || p.ELF != kernel {
		t.Errorf("probe free: gdb %q elf %q", p.GDB, p.ELF)
	}
	if p := seq.Probe("elf"); p.GDB != QEMUPending || p.ELF != filepath.Join(dir, "own.elf") {
		t.Errorf("probe elf: gdb %q elf %q", p.GDB, p.ELF)
	}
	if p := seq.Probe("bound"); p.GDB != "10.0.0.1:3333" {
		t.Errorf("probe bound was rebound to %q", p.GDB)
	}

	seq.Device("uart").Port = ""
	if _, err := ReserveQEMU(seq, kernel); err == nil || !strings.Contains(err.Error(), "devices [console uart] have no port") {
		t.Errorf("two devices without a port: %v", err)
	}
}
