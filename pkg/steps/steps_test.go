package steps_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/steps"
)

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		file string
		src  string
		want []string // FILE:LINE:COL: message prefixes, in order
	}{
		{"unknown top-level key", "a.yaml", "stepz: []\nsteps: [{delay: 1s}]\n",
			[]string{`a.yaml:1:1: unknown key "stepz" in the sequence (did you mean "steps"?)`}},
		{"unknown step kind", "a.yaml", "steps:\n  - sned: hi\n",
			[]string{`a.yaml:2:5: unknown step kind "sned" (did you mean "send"?); the closest kinds are send, set, lines, exec (hilrun schema lists them all)`}},
		{"unknown step key", "a.yaml", "steps:\n  - send: hi\n    expct: x\n",
			[]string{`a.yaml:3:5: unknown key "expct" in a send step (did you mean "expect"?)`}},
		{"bare number duration", "a.yaml", "steps:\n  - delay: 100\n",
			[]string{`a.yaml:2:12: delay must be a duration with a unit, like 100ms or 100s, found the bare number 100`}},
		{"bad duration", "a.yaml", "steps:\n  - delay: 10 parsecs\n",
			[]string{`a.yaml:2:12: delay: "10 parsecs" is not a duration`}},
		{"bad regex", "a.yaml", "steps:\n  - expect: 'a('\n    regex: true\n",
			[]string{`a.yaml:2:13: expect: invalid regexp "a(": missing closing )`}},
		{"expression that does not compile", "a.yaml", "steps:\n  - assert: 'x >'\n",
			[]string{`a.yaml:2:13: expression "x >" does not compile: unexpected token EOF`}},
		{"undefined variable in an expression", "a.yaml", "vars: {counter: 1}\nsteps:\n  - assert: countr > 1\n",
			[]string{`a.yaml:3:13: variable "countr" is not defined here: define it under vars:, set it or save it in an earlier step, or pass --var countr=VALUE (did you mean "counter"?)`}},
		{"variable used before it is saved", "a.yaml", "steps:\n  - send: 'echo ${v}'\n  - expect: 'v(\\d)'\n    regex: true\n    save: v\n",
			[]string{`a.yaml:2:5: variable "v" is not defined here`}},
		{"unknown device", "a.yaml", "devices: {dut: /dev/ttyUSB0}\nsteps:\n  - send: x\n    to: dot\n",
			[]string{`a.yaml:3:5: to: unknown device "dot"; devices are dut (did you mean "dut"?)`}},
		{"several devices need to", "a.yaml", "devices: {a: /dev/ttyUSB0, b: /dev/ttyUSB1}\nsteps:\n  - send: x\n",
			[]string{`a.yaml:3:5: this send step needs to: because the sequence has several devices (a, b)`}},
		{"two kinds in one step", "a.yaml", "steps:\n  - {delay: 1s, assert: 'true'}\n",
			[]string{`a.yaml:2:17: a step does one thing, but this one has both delay and assert`}},
		{"exec one word with spaces", "a.yaml", "steps:\n  - exec: uhubctl -a cycle\n",
			[]string{`a.yaml:2:5: exec "uhubctl -a cycle" is one word with spaces or shell characters: write an argument vector like [uhubctl, -a, cycle], or add shell: true`}},
		{"exec exit code", "a.yaml", "steps:\n  - exec: [true]\n    exit_code: [0, x]\n",
			[]string{`a.yaml:3:20: exit_code must be a number from 0 to 255, a list of them, or any; found the text "x"`}},
		{"lines without a line", "a.yaml", "steps:\n  - lines: {hold: 10ms}\n",
			[]string{`a.yaml:2:12: lines needs dtr:, rts: or both`}},
		{"lines key", "a.yaml", "steps:\n  - lines: {dtr: true, rst: false}\n",
			[]string{`a.yaml:2:24: unknown key "rst" in lines (did you mean "rts"?)`}},
		{"break length", "a.yaml", "steps:\n  - break: 0s\n",
			[]string{`a.yaml:2:12: break needs a length above 0`}},
		{"reset sequence name", "a.yaml", "steps:\n  - reset_sequence: esp23\n",
			[]string{`a.yaml:2:21: reset_sequence must be one of esp32, esp32_run, arduino, found "esp23" (did you mean "esp32"?)`}},
		{"image check needs a bound", "a.yaml", "steps:\n  - expect_image: {region: [0, 0, 4, 4]}\n",
			[]string{`a.yaml:2:19: expect_image needs brightness:`}},
		{"image check bound", "a.yaml", "steps:\n  - expect_image: {brightness: '>1.5'}\n",
			[]string{`a.yaml:2:32: brightness: brightness runs from 0 (black) to 1 (white)`}},
		{"image check colour", "a.yaml", "steps:\n  - expect_image: {color: grene}\n",
			[]string{`a.yaml:2:27: color: "grene" is not a colour: write #rrggbb, #rgb or one of black, white`}},
		{"image region", "a.yaml", "steps:\n  - expect_image: {region: [0, 0, 4], brightness: '>0.5'}\n",
			[]string{`a.yaml:2:28: region must be [x, y, width, height] in pixels`}},
		{"camera label", "a.yaml", "steps:\n  - capture: {camera: 0, label: ../x}\n",
			[]string{`a.yaml:2:33: label "../x" names picture files`}},
		{"unknown camera", "a.yaml", "cameras: {top: /dev/video0}\nsteps:\n  - capture: {camera: tpo}\n",
			[]string{`a.yaml:3:5: camera: unknown camera "tpo"; cameras are top (did you mean "top"?)`}},
		{"power action", "a.yaml", "steps:\n  - power: {device: dut, action: reboot}\n",
			[]string{`a.yaml:2:34: action must be one of on, off, cycle, found "reboot"`}},
		{"power entry", "a.yaml", "power: {dut: {on: [x]}}\nsteps:\n  - power: cycle\n",
			[]string{`a.yaml:1:9: power dut needs on: and off: commands`}},
		{"wrong type", "a.yaml", "devices:\n  dut: {port: /dev/x, baud: fast}\nsteps: [{send: x}]\n",
			[]string{`a.yaml:2:29: baud must be a whole number, found the text "fast"`}},
		{"enum", "a.yaml", "devices:\n  dut: {port: /dev/x, parity: evn}\nsteps: [{send: x}]\n",
			[]string{`a.yaml:2:31: parity must be one of none, odd, even, mark, space, found "evn" (did you mean "even"?)`}},
		{"network port scheme", "a.yaml", "devices:\n  dut: telnet://lab1:2000\nsteps: [{send: x}]\n",
			[]string{`a.yaml:2:8: port "telnet://lab1:2000": unknown scheme "telnet" (want tcp://HOST:PORT for a raw socket or rfc2217://HOST:PORT for telnet with serial port control)`}},
		{"network port without a port", "a.yaml", "devices:\n  dut: {port: 'rfc2217://lab1'}\n  ok: {port: 'tcp://lab1:3001'}\nsteps: [{send: x, to: dut}]\n",
			[]string{`a.yaml:2:15: port "rfc2217://lab1": want rfc2217://HOST:PORT`}},
		{"duplicate key", "a.yaml", "steps: [{delay: 1s}]\nsteps: [{delay: 1s}]\n",
			[]string{`a.yaml:2:1: duplicate key "steps"`}},
		{"invalid YAML", "a.yaml", "steps:\n  - send: [\n",
			[]string{`a.yaml:2:3: invalid YAML: did not find expected node content`}},
		{"invalid JSON", "a.json", "[{\"send\": \"x\",}]",
			[]string{`a.json:1:15: invalid JSON: invalid character '}'`}},
		{"empty file", "a.yaml", "",
			[]string{`a.yaml:1:1: the file is empty`}},
		{"no steps", "a.yaml", "name: x\n",
			[]string{`a.yaml:1:1: the sequence has no steps`}},
		{"save group out of range", "a.yaml", "steps:\n  - expect: 'v(\\d)'\n    regex: true\n    save: {a: 2}\n",
			[]string{`a.yaml:4:12: save a: the pattern /v(\d)/ has 1 group(s), not 2`}},
		{"capture without an end", "a.yaml", "steps:\n  - capture: {label: x}\n",
			[]string{`a.yaml:2:14: capture needs something that ends it`}},
		{"repeat without count", "a.yaml", "steps:\n  - repeat: {every: 1s}\n    steps: [{delay: 1ms}]\n",
			[]string{`a.yaml:2:13: repeat needs a count or a for: duration`}},
		{"camera capture frames", "a.yaml", "steps:\n  - capture: {camera: 0, frames: 0}\n",
			[]string{`a.yaml:2:34: frames must be a whole number from 1 to 1000, found 0`}},
		{"builtin name as variable", "a.yaml", "vars: {count: 1}\nsteps:\n  - assert: count > 0\n",
			[]string{`a.yaml:3:13: in "count > 0", count is the name of an expression function; write vars.count for the variable`}},
		{"every problem is reported", "a.yaml", "steps:\n  - delay: 1\n  - send: '${x}'\n",
			[]string{`a.yaml:2:12: delay must be`, `a.yaml:3:5: variable "x" is not defined`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seq, err := steps.Parse(tt.file, []byte(tt.src), steps.LoadOptions{})
			if err == nil {
				t.Fatalf("no error; parsed %+v", seq)
			}
			var el steps.ErrorList
			if !errors.As(err, &el) {
				t.Fatalf("error is %T, want steps.ErrorList: %v", err, err)
			}
			if len(el) != len(tt.want) {
				t.Fatalf("got %d errors, want %d:\n%v", len(el), len(tt.want), err)
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(el[i].Error(), w) {
					t.Errorf("error %d:\n got %s\nwant %s", i, el[i].Error(), w)
				}
			}
		})
	}
}

func TestParseSeedForms(t *testing.T) {
	src := `[
	{"send": "help", "to": "/dev/ttyACM0", "expect": "OK", "read_timeout": 2.0, "line_ending": "lf"},
	{"delay_ms": 500},
	{"send": "version", "to": "/dev/ttyACM0"}
]`
	seq, err := steps.Parse("seed.json", []byte(src), steps.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(seq.Devices) != 1 || seq.Devices[0].Port != "/dev/ttyACM0" || !seq.Devices[0].Implicit {
		t.Fatalf("devices = %+v", seq.Devices)
	}
	s0, s1 := seq.Steps[0], seq.Steps[1]
	if s0.Kind != steps.KindSend || s0.Timeout != 2*time.Second || s0.LineEnding != "lf" || s0.Expect[0].String() != "OK" || s0.To != "/dev/ttyACM0" {
		t.Errorf("send step = %+v", s0)
	}
	if s1.Kind != steps.KindDelay || s1.Delay != 500*time.Millisecond {
		t.Errorf("delay step = %+v", s1)
	}
	if seq.Name != "seed" {
		t.Errorf("name = %q, want the file's base name", seq.Name)
	}
}

func TestParseModel(t *testing.T) {
	src := `
name: model
devices:
  dut:
    port: /dev/ttyUSB0
    baud: 921600
    line_ending: crlf
    usb: {vid: "0483", pid: 374B}
vars: {fw: "1.2.3", n: 3}
expect_timeout: 2s
fail_on: [HardFault, {regex: 'panic\(\d+\)'}]
steps:
  - send_hex: "0d 0A ff"
  - send_ctrl: c
  - send: "version ${fw}"
    expect: ['v(\d+)', ERROR]
    regex: true
    save: major
  - capture: {duration: 1s, start: first_byte, max_bytes: 10, until: done}
    save: out
  - repeat: {count: 2, every: 10ms, as: i}
    steps: [{set: {x: {expr: "i * 2"}}}]
  - group: tail
    steps: [{delay_ms: 1.5}]
`
	seq, err := steps.Parse("m.yaml", []byte(src), steps.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d := seq.Devices[0]
	if d.Baud != 921600 || d.LineEnding != "crlf" || d.USB.VID != "0483" || d.USB.PID != "374b" {
		t.Errorf("device = %+v %+v", d, d.USB)
	}
	if string(seq.Steps[0].Bytes) != "\r\n\xff" || string(seq.Steps[1].Bytes) != "\x03" {
		t.Errorf("bytes = %q %q", seq.Steps[0].Bytes, seq.Steps[1].Bytes)
	}
	s := seq.Steps[2]
	if len(s.Expect) != 2 || !s.Expect[0].Regex || s.Save[0].Var != "major" || s.To != "dut" {
		t.Errorf("send step = %+v", s)
	}
	c := seq.Steps[3].Capture
	if !c.FirstByte || c.MaxBytes != 10 || c.Duration != time.Second || len(c.Until) != 1 {
		t.Errorf("capture = %+v", c)
	}
	r := seq.Steps[4]
	if r.Count != 2 || r.Every != 10*time.Millisecond || r.As != "i" || r.Steps[0].Set[0].Expr == nil {
		t.Errorf("repeat = %+v", r)
	}
	if seq.Steps[5].Steps[0].Delay != 1500*time.Microsecond {
		t.Errorf("delay_ms = %v", seq.Steps[5].Steps[0].Delay)
	}
	if seq.ExpectTimeout != 2*time.Second || len(seq.FailOn) != 2 || !seq.FailOn[1].Regex {
		t.Errorf("sequence = %+v", seq)
	}
}

func TestTemplate(t *testing.T) {
	vars := map[string]any{"a": "x", "n": 42}
	lookup := func(name string) (any, bool) { v, ok := vars[name]; return v, ok }
	tests := []struct {
		in, want, err string
	}{
		{"plain", "plain", ""},
		{"${a}-${n}", "x-42", ""},
		{"$${a} is literal", "${a} is literal", ""},
		{"${ a }", "x", ""},
		{"${missing}", "", `variable "missing" is not defined`},
		{"${a", "", "unclosed ${"},
		{"${}", "", "bad variable reference"},
		{"${1x}", "", "bad variable reference"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			tmpl, err := steps.ParseTemplate(tt.in)
			if err == nil {
				var got string
				got, err = tmpl.Expand(lookup, nil)
				if err == nil && got != tt.want {
					t.Errorf("got %q, want %q", got, tt.want)
				}
			}
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Errorf("error %v, want %q", err, tt.err)
			}
		})
	}
}

func TestBenchBinding(t *testing.T) {
	dir := t.TempDir()
	bench := filepath.Join(dir, steps.BenchFile)
	if err := os.WriteFile(bench, []byte("devices:\n  dut: {port: /dev/ttyACM3, baud: 9600}\n  other: /dev/ttyS0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := steps.LoadBench(files.Anywhere(), bench)
	if err != nil {
		t.Fatal(err)
	}
	seq, err := steps.Parse("s.yaml", []byte("devices:\n  dut: {usb: {vid: '1a86', pid: '7523'}, line_ending: cr}\nsteps: [{send: x}]\n"), steps.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bound, err := steps.Bind(seq, steps.Binding{Bench: b})
	if err != nil {
		t.Fatal(err)
	}
	d := bound.Devices[0]
	if d.Port != "/dev/ttyACM3" || d.USB != nil || d.Baud != 9600 || d.LineEnding != "cr" {
		t.Errorf("bound device = %+v", d)
	}
	if again, err := steps.Bind(bound, steps.Binding{Ports: map[string]string{"dut": "/dev/pts/7"}}); err != nil || again.Devices[0].Port != "/dev/pts/7" {
		t.Errorf("a port: %v", err)
	}
	_, err = steps.Bind(seq, steps.Binding{Ports: map[string]string{"dot": "/dev/pts/7"}})
	if err == nil || !strings.Contains(err.Error(), `has no device "dot"; its devices are dut (did you mean "dut"?)`) {
		t.Errorf("unknown --port device: %v", err)
	}
	if err := os.WriteFile(bench, []byte("devics: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := steps.LoadBench(files.Anywhere(), bench); err == nil || !strings.Contains(err.Error(), `hilrun.bench.yaml:1:1: unknown key "devics" in the bench file (did you mean "devices"?)`) {
		t.Errorf("bad bench: %v", err)
	}
}

func TestParseAssignments(t *testing.T) {
	got, err := steps.ParseAssignments("var", []string{"a=1", "b=x=y", "c="})
	if err != nil || got["a"] != "1" || got["b"] != "x=y" || got["c"] != "" {
		t.Errorf("got %v, %v", got, err)
	}
	for _, bad := range [][]string{{"novalue"}, {"=x"}, {"a=1", "a=2"}, {"1a=x"}} {
		if _, err := steps.ParseAssignments("var", bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestNum(t *testing.T) {
	for in, want := range map[string]any{"42": 42, "0x2a": 42, "0b101": 5, "3.5": 3.5, " 7 ": 7} {
		got, err := steps.Num(in)
		if err != nil || got != want {
			t.Errorf("Num(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := steps.Num("seven"); err == nil {
		t.Error("Num(seven): no error")
	}
}

// A probe's launch: {qemu: ...} is a GDB probe whose paths are relative to
// the file; a bench file's QEMU launch replaces the sequence's OpenOCD
// launch, and a bench file's gdb: address replaces the sequence's QEMU.
func TestQEMULaunchBinding(t *testing.T) {
	dir := t.TempDir()
	bench := filepath.Join(dir, steps.BenchFile)
	if err := os.WriteFile(bench, []byte("probes:\n  a:\n    launch:\n      qemu: {machine: virt, bios: u-boot.bin, args: [-m, 256M], console: console}\n  b: {gdb: 127.0.0.1:1234}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := steps.LoadBench(files.Anywhere(), bench)
	if err != nil {
		t.Fatal(err)
	}
	seq, err := steps.Parse(filepath.Join(dir, "sub", "s.yaml"), []byte("devices:\n  console:\nprobes:\n  a: {launch: {config: [x.cfg]}}\n  b:\n    launch:\n      qemu: {machine: mps2-an385, kernel: fw.elf, console: console}\nsteps:\n  - {halt: true, probe: a}\n  - {halt: true, probe: b}\n"), steps.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pb := seq.Probe("b")
	if !pb.LaunchesQEMU() || pb.Backend() != steps.BackendGDB || pb.Launch.QEMU.Kernel != filepath.Join(dir, "sub", "fw.elf") || pb.Launch.QEMU.Console != "console" {
		t.Errorf("probe b = %+v, launch %+v", pb, pb.Launch.QEMU)
	}
	seq, err = steps.Bind(seq, steps.Binding{Bench: b})
	if err != nil {
		t.Fatal(err)
	}
	pa := seq.Probe("a")
	if !pa.LaunchesQEMU() || len(pa.Launch.Config) != 0 || pa.Launch.QEMU.BIOS != filepath.Join(dir, "u-boot.bin") || pa.Launch.QEMU.Machine != "virt" {
		t.Errorf("probe a after the bench = %+v", pa.Launch)
	}
	if pb = seq.Probe("b"); pb.LaunchesQEMU() || pb.GDB != "127.0.0.1:1234" {
		t.Errorf("probe b after the bench = %+v", pb)
	}
}
