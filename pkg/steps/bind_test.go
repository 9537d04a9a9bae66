package steps_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/steps"
)

// One loaded sequence binds to two benches: each gets its own ports,
// probes, cameras and power commands, and the loaded sequence stays as it
// was loaded.
func TestBindLeavesTheSequence(t *testing.T) {
	dir := t.TempDir()
	src := "devices:\n  dut: {baud: 9600}\nprobes:\n  swd: {launch: {config: [board.cfg]}}\ncameras:\n  top: {}\nsteps:\n  - {send: x, to: dut}\n  - {halt: true, probe: swd}\n  - {capture: {camera: top}}\n  - {power: cycle}\n"
	path := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	load := func() *steps.Sequence {
		seq, err := steps.Load(files.Anywhere(), path, steps.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return seq
	}
	seq, fresh := load(), load()
	bench := func(name, body string) *steps.Bench {
		p := filepath.Join(dir, name+".bench.yaml")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		b, err := steps.LoadBench(files.Anywhere(), p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a := bench("a", "devices:\n  dut: {port: /dev/ttyACM0, baud: 115200}\nprobes:\n  swd: {launch: {adapter_serial: A1}}\ncameras:\n  top: {input: /dev/video0}\npower:\n  dut: {on: [relay, '1', 'on'], off: [relay, '1', 'off']}\n")
	b := bench("b", "devices:\n  dut: {port: /dev/ttyACM1}\nprobes:\n  swd: {gdb: 127.0.0.1:3333}\ncameras:\n  top: {input: /dev/video2}\npower:\n  dut: {on: [relay, '2', 'on'], off: [relay, '2', 'off']}\n")

	ba, err := steps.Bind(seq, steps.Binding{Bench: a})
	if err != nil {
		t.Fatal(err)
	}
	bb, err := steps.Bind(seq, steps.Binding{Bench: b, Ports: map[string]string{"dut": "/dev/pts/9"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := steps.CheckPower(ba); err != nil {
		t.Fatal(err)
	}
	if err := steps.CheckPower(bb); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(seq, fresh) {
		t.Errorf("binding changed the loaded sequence:\n%+v\nwant\n%+v", seq, fresh)
	}
	if d := ba.Device("dut"); d.Port != "/dev/ttyACM0" || d.Baud != 115200 {
		t.Errorf("bench a: device %+v", d)
	}
	if d := bb.Device("dut"); d.Port != "/dev/pts/9" || d.Baud != 9600 {
		t.Errorf("bench b: device %+v", d)
	}
	if p := ba.Probe("swd"); p.Launch == nil || p.Launch.AdapterSerial != "A1" || len(p.Launch.Config) != 1 {
		t.Errorf("bench a: probe %+v", p)
	}
	if p := bb.Probe("swd"); p.GDB != "127.0.0.1:3333" || p.Launch != nil {
		t.Errorf("bench b: probe %+v", p)
	}
	if ba.Camera("top").Input != "/dev/video0" || bb.Camera("top").Input != "/dev/video2" {
		t.Errorf("cameras: %s, %s", ba.Camera("top").Input, bb.Camera("top").Input)
	}
	var power *steps.PowerSpec
	steps.Walk(seq, func(s *steps.Step) {
		if s.Kind == steps.KindPower {
			power = s.Power
		}
	})
	if got := ba.Power[steps.PowerTarget(ba, power)].PowerCommand("on"); len(got) < 2 || got[1] != "1" {
		t.Errorf("bench a power on = %v", got)
	}
	if got := bb.Power[steps.PowerTarget(bb, power)].PowerCommand("on"); len(got) < 2 || got[1] != "2" {
		t.Errorf("bench b power on = %v", got)
	}
	if cam := steps.BindCameras(seq, "http://x/stream", "mpjpeg"); cam.Camera("top").Input != "http://x/stream" || seq.Camera("top").Input != "" {
		t.Errorf("BindCameras: bound %q, loaded %q", cam.Camera("top").Input, seq.Camera("top").Input)
	}
}

// Bind's errors are read by MCP clients as well as on the command line:
// they name what was bound, never a flag.
func TestBindErrorsNameNoFlags(t *testing.T) {
	seq, err := steps.Parse("s.yaml", []byte("devices:\n  dut:\nprobes:\n  swd:\nsteps:\n  - {send: x}\n  - {halt: true}\n"), steps.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string]steps.Binding{
		"unknown device":  {Ports: map[string]string{"dot": "/dev/pts/7"}},
		"unknown openocd": {OpenOCDs: map[string]string{"swdd": "127.0.0.1:4444"}},
		"unknown gdb":     {GDBs: map[string]string{"jtag": "127.0.0.1:3333"}},
		"gdb and openocd": {GDBs: map[string]string{"swd": "127.0.0.1:3333"}, OpenOCDs: map[string]string{"swd": "127.0.0.1:4444"}},
		"gdb address":     {GDBs: map[string]string{"swd": "nowhere"}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := steps.Bind(seq, b)
			var be *steps.BindError
			if err == nil || !strings.Contains(err.Error(), "bind ") {
				t.Fatalf("err = %v", err)
			}
			if strings.Contains(err.Error(), "--") {
				t.Errorf("the error names a flag: %v", err)
			}
			if !errors.As(err, &be) || be.Name == "" || be.Kind == "" {
				t.Errorf("not a *BindError: %#v", err)
			}
		})
	}
}

// A probe bound to a stub that the sequence does not declare is reported
// with where probes are declared.
func TestBindUnknownProbeSaysProbes(t *testing.T) {
	seq, err := steps.Parse("s.yaml", []byte("devices:\n  dut:\nsteps:\n  - {send: x}\n"), steps.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []steps.Binding{
		{GDBs: map[string]string{"q": "127.0.0.1:1"}},
		{OpenOCDs: map[string]string{"q": "127.0.0.1:4444"}},
	} {
		_, err := steps.Bind(seq, b)
		if err == nil || !strings.Contains(err.Error(), `has no probe "q"; its probes are none (declare them under probes:)`) {
			t.Errorf("got %v", err)
		}
	}
}
