package steps_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/imaging"
	"github.com/hilrun/hilrun/pkg/steps"
)

func TestParseCameraForms(t *testing.T) {
	src := `[
	{"capture": true, "label": "my_label", "device_index": 0},
	{"capture": true},
	{"capture": {"camera": "/dev/video2", "label": "board", "frames": 3, "size": "640x480"},
	 "expect_image": [{"region": [10, 20, 8, 8], "brightness": ">0.6"}, {"region": [0, 0, 4, 4], "color": "#0f0", "tolerance": 0.3}]},
	{"expect_image": {"brightness": ["> 0.2", "<0.8"]}, "camera": "rtsp://cam.local/stream"}
]`
	seq, err := steps.Parse("seed.json", []byte(src), steps.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range seq.Steps {
		if s.Kind != steps.KindCamera {
			t.Fatalf("step %d is %s, want camera", i, s.Kind)
		}
	}
	c0, c1, c2, c3 := seq.Steps[0].Camera, seq.Steps[1].Camera, seq.Steps[2].Camera, seq.Steps[3].Camera
	if c0.Camera != "0" || c0.Label != "my_label" || c0.Frames != 1 {
		t.Errorf("seed form: %+v", c0)
	}
	if c1.Camera != steps.DefaultCamera {
		t.Errorf("capture: true uses camera %q, want %q", c1.Camera, steps.DefaultCamera)
	}
	if c2.Camera != "/dev/video2" || c2.Frames != 3 || c2.Size != "640x480" || len(c2.Checks) != 2 {
		t.Errorf("full form: %+v", c2)
	}
	if r := c2.Checks[0].Region; r != (imaging.Rect{X: 10, Y: 20, W: 8, H: 8}) {
		t.Errorf("region %+v", r)
	}
	if b := c2.Checks[0].Brightness; len(b) != 1 || !b[0].Holds(0.61) || b[0].Holds(0.6) {
		t.Errorf("brightness >0.6 parsed as %v", b)
	}
	if col := c2.Checks[1].Color; col == nil || *col != (imaging.RGB{R: 0, G: 1, B: 0}) || c2.Checks[1].Tolerance != 0.3 {
		t.Errorf("colour check %+v", c2.Checks[1])
	}
	if b := c3.Checks[0].Brightness; len(b) != 2 || !b[0].Holds(0.5) || b[1].Holds(0.9) {
		t.Errorf("brightness bounds %v", b)
	}
	var inputs []string
	for _, c := range seq.Cameras {
		inputs = append(inputs, c.Name+"="+c.Input)
	}
	want := []string{"0=0", "camera=0", "/dev/video2=/dev/video2", "rtsp://cam.local/stream=rtsp://cam.local/stream"}
	if !slices.Equal(inputs, want) {
		t.Errorf("implicit cameras %v, want %v", inputs, want)
	}
}

func TestParseLinesExecPower(t *testing.T) {
	src := `devices: {dut: /dev/ttyUSB0}
power:
  dut: {on: [relay, "1", "on"], off: [relay, "1", "off"], off_time: 2s}
vars: {port: "2"}
steps:
  - lines: {dtr: false, rts: true, hold: 100ms}
  - break: 250ms
  - reset_sequence: esp32
  - exec: [uhubctl, -a, cycle, -p, "${port}"]
    timeout: 10s
    env: {LANG: C}
    exit_code: [0, 1]
    expect: 'Port (\d+)'
    regex: true
    save: port_seen
  - exec: "ls | wc -l"
    shell: true
    save: listing
    exit_code: any
  - send: "${listing} ${port_seen}"
  - power: cycle
  - power: {device: dut, action: "off"}
`
	seq, err := steps.Parse("/tmp/x/a.yaml", []byte(src), steps.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := seq.Steps
	if l := s[0].Lines; s[0].To != "dut" || l.DTR == nil || *l.DTR || l.RTS == nil || !*l.RTS || l.Hold != 100*time.Millisecond {
		t.Errorf("lines: to %q %+v", s[0].To, l)
	}
	if s[1].Kind != steps.KindBreak || s[1].Delay != 250*time.Millisecond || s[1].To != "dut" {
		t.Errorf("break: %+v", s[1])
	}
	if s[2].ResetSequence != "esp32" || s[2].To != "dut" {
		t.Errorf("reset_sequence: %+v", s[2])
	}
	x := s[3].Exec
	if len(x.Command) != 5 || x.Command[4].Raw != "${port}" || !slices.Equal(x.ExitCodes, []int{0, 1}) || x.Dir != "/tmp/x" || s[3].Timeout != 10*time.Second || len(s[3].Expect) != 1 {
		t.Errorf("exec: %+v", x)
	}
	if y := s[4].Exec; !y.Shell || !y.AnyExit || len(s[4].Save) != 1 {
		t.Errorf("shell exec: %+v save %+v", y, s[4].Save)
	}
	// A power step without a device switches the bound sequence's only
	// power entry; checking changes nothing.
	if err := steps.CheckPower(seq); err != nil {
		t.Errorf("CheckPower: %v", err)
	}
	if p := s[6].Power; p.Target != "" || p.Action != "cycle" || steps.PowerTarget(seq, p) != "dut" {
		t.Errorf("power: %+v", p)
	}
	if p := s[7].Power; p.Target != "dut" || p.Action != "off" {
		t.Errorf("power off: %+v", p)
	}
	e := seq.Power["dut"]
	if e == nil || !slices.Equal(e.PowerCommand("on"), []string{"relay", "1", "on"}) || e.PowerCommand("cycle") != nil || e.OffTimeOrDefault() != 2*time.Second {
		t.Errorf("power entry %+v", e)
	}
}

func TestBenchCamerasAndPower(t *testing.T) {
	dir := t.TempDir()
	bench := filepath.Join(dir, "hilrun.bench.yaml")
	if err := os.WriteFile(bench, []byte(`cameras:
  top: {input: /dev/video2, size: 1280x720}
power:
  dut: {cycle: "uhubctl -a cycle -p 2", shell: true}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := steps.LoadBench(files.Anywhere(), bench)
	if err != nil {
		t.Fatal(err)
	}
	seq, err := steps.Parse("a.yaml", []byte("steps:\n  - capture: {camera: top}\n  - power: {device: dut, action: cycle}\n  - power: {device: other, action: \"on\"}\n  - power: \"on\"\n"), steps.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := steps.CheckPower(seq); err == nil {
		t.Error("CheckPower before binding the bench found every entry")
	}
	seq, err = steps.Bind(seq, steps.Binding{Bench: b})
	if err != nil {
		t.Fatal(err)
	}
	if c := seq.Camera("top"); c == nil || c.Input != "/dev/video2" || c.Size != "1280x720" {
		t.Errorf("bench camera not bound: %+v", c)
	}
	if got := seq.Power["dut"].PowerCommand("cycle"); !slices.Equal(got, []string{"sh", "-c", "uhubctl -a cycle -p 2"}) {
		t.Errorf("cycle command %q", got)
	}
	// The bench's only power entry is the default board; an entry with
	// only a cycle command cannot switch on.
	err = steps.CheckPower(seq)
	want := `a.yaml:4:5: power: no power entry for "other": add one to the bench file, such as power: {other: {on: [uhubctl, -a, on, -p, "2"], off: [uhubctl, -a, off, -p, "2"]}}` + "\n" +
		`a.yaml:5:5: power on dut: the power entry for dut (` + bench + `:4:3) has no on: command`
	if err == nil || err.Error() != want {
		t.Errorf("CheckPower:\n got %v\nwant %s", err, want)
	}
}
