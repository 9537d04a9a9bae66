package runner_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/sim"
	"github.com/hilrun/hilrun/pkg/steps"
)

// typedProbe has the typed operations only, like a backend without raw
// commands, and stops the target for every access when told it runs, as
// an all-stop GDB stub does.
type typedProbe struct {
	mem     *sim.Memory
	mu      sync.Mutex
	calls   []string
	running bool
	stopped bool // the last access stopped the running target
}

var (
	_ runner.Debugger       = (*typedProbe)(nil)
	_ runner.AccessReporter = (*typedProbe)(nil)
)

func (p *typedProbe) call(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, s)
}

func (p *typedProbe) ReadMemory(ctx context.Context, addr uint64, width, count int) ([]uint64, error) {
	p.stopped = p.running
	var out []uint64
	for i := range count {
		v, err := p.mem.Read(uint32(addr)+uint32(i*width/8), width)
		if err != nil {
			return nil, &busError{err.Error()}
		}
		out = append(out, uint64(v))
	}
	return out, nil
}

func (p *typedProbe) WriteMemory(ctx context.Context, addr uint64, width int, values []uint64) error {
	p.stopped = p.running
	for i, v := range values {
		if err := p.mem.Write(uint32(addr)+uint32(i*width/8), width, uint32(v)); err != nil {
			return &busError{err.Error()}
		}
	}
	return nil
}

func (p *typedProbe) Halt(ctx context.Context) error { p.call("Halt"); p.running = false; return nil }
func (p *typedProbe) Resume(ctx context.Context) error {
	p.call("Resume")
	p.running = true
	return nil
}
func (p *typedProbe) Reset(ctx context.Context, mode string) error {
	p.call("Reset " + mode)
	p.running = mode == "run"
	return nil
}
func (p *typedProbe) LastAccessHalted() bool { return p.stopped }
func (p *typedProbe) Close() error           { return nil }

func runWith(t *testing.T, src string, d runner.Debugger) *runner.SequenceResult {
	t.Helper()
	seq, err := steps.Parse("t.yaml", []byte(src), steps.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return runner.Run(context.Background(), seq, runner.Bench{
		OpenProbe: func(context.Context, *steps.Probe) (runner.Debugger, error) { return d, nil },
	}, runner.Options{
		KeepSteps: true,
	})
}

// halt, resume and reset call the probe's typed operations; a memory step
// on a running target that the probe had to stop says so in its data.
func TestTypedProbeControl(t *testing.T) {
	p := &typedProbe{mem: sim.NewMemory()}
	res := runWith(t, `
steps:
  - halt: true
  - mem_read: 0x20000100
  - resume: true
  - mem_write: 0x20000100
    value: 7
    verify: true
  - reset: halt
  - reset: true
  - mem_poll: 0x20000100
    expect: 7
`, p)
	if got := statuses(res); got != "0:passed 1:passed 2:passed 3:passed 4:passed 5:passed 6:passed" {
		t.Fatalf("steps = %s (%s)", got, res.Error)
	}
	if want := []string{"Halt", "Resume", "Reset halt", "Reset run"}; !slices.Equal(p.calls, want) {
		t.Errorf("probe calls %v, want %v", p.calls, want)
	}
	for i, want := range []bool{false, false, false, true, false, false, true} {
		got, _ := res.Steps[i].Data["halted_for_access"].(bool)
		if got != want {
			t.Errorf("step %d (%s): halted_for_access %v, want %v", i, res.Steps[i].Kind, got, want)
		}
	}
	if cmd := res.Steps[4].Data["command"]; cmd != "reset halt" {
		t.Errorf("reset step data: command %v", cmd)
	}
}

// A raw command step on a probe without raw commands errors clearly
// (validation refuses it before the run; the runner still says why).
func TestRawCommandNeedsRawCommander(t *testing.T) {
	p := &typedProbe{mem: sim.NewMemory()}
	for _, kind := range []string{"openocd", "monitor"} {
		res := runWith(t, "steps:\n  - "+kind+": reg pc\n", p)
		if res.Status != runner.Errored || len(res.Steps) != 1 || !strings.Contains(res.Steps[0].Message, "probe target takes no raw commands") {
			t.Errorf("%s step: %s: %+v", kind, res.Status, res.Steps)
		}
	}
}

// monitor and openocd steps send their text through RawCommander, with
// expect and save over the output.
func TestMonitorStep(t *testing.T) {
	p := &memProbe{mem: sim.NewMemory()}
	res := runWith(t, `
steps:
  - monitor: reg pc
    expect: 'pc \(/32\): (0x[0-9a-f]+)'
    regex: true
    save: pc
  - assert: pc == "0x08000abc"
  - monitor: nonsense
`, p)
	if got := statuses(res); got != "0:passed 1:passed 2:failed" {
		t.Fatalf("steps = %s (%s)", got, res.Error)
	}
	if msg := res.Steps[2].Message; !strings.Contains(msg, `nonsense: invalid command name "nonsense"`) {
		t.Errorf("a refused command: %s", msg)
	}
}
