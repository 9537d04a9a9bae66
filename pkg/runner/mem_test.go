package runner_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/sim"
	"github.com/hilrun/hilrun/pkg/steps"
)

// memProbe is a debugger over the virtual board's memory map, for fast
// tests of the memory steps; the end-to-end tests in internal/cli drive the
// real OpenOCD against the board's JTAG port.
type memProbe struct {
	mem *sim.Memory

	mu       sync.Mutex
	commands []string
	closed   bool
	down     bool
	// retrying makes reads retry a lost connection until their context
	// ends, as openocd.Session does.
	retrying bool
}

// lostError is a debugger that could not be reached, even after retries.
type lostError struct{ msg string }

func (e *lostError) Error() string    { return e.msg }
func (e *lostError) BenchFault() bool { return true }

var _ runner.Debugger = (*memProbe)(nil)

type busError struct{ msg string }

func (e *busError) Error() string     { return e.msg }
func (e *busError) TestFailure() bool { return true }

func (p *memProbe) ReadMemory(ctx context.Context, addr uint64, width, count int) ([]uint64, error) {
	if p.down {
		return nil, errors.New("openocd 127.0.0.1:4444: connection refused")
	}
	if p.retrying {
		<-ctx.Done()
		return nil, &lostError{"reconnect to openocd at 127.0.0.1:4444: connection refused (tried 5 times over 100ms)"}
	}
	var out []uint64
	for i := 0; i < count; i++ {
		a := addr + uint64(i*width/8)
		if width == 64 {
			lo, err1 := p.mem.Read(uint32(a), 32)
			hi, err2 := p.mem.Read(uint32(a+4), 32)
			if err := errors.Join(err1, err2); err != nil {
				return nil, &busError{fmt.Sprintf("Failed to read memory at 0x%08x", a)}
			}
			out = append(out, uint64(hi)<<32|uint64(lo))
			continue
		}
		v, err := p.mem.Read(uint32(a), width)
		if err != nil {
			return nil, &busError{fmt.Sprintf("Failed to read memory at 0x%08x", a)}
		}
		out = append(out, uint64(v))
	}
	return out, nil
}

func (p *memProbe) WriteMemory(ctx context.Context, addr uint64, width int, values []uint64) error {
	for i, v := range values {
		a := addr + uint64(i*width/8)
		if err := p.mem.Write(uint32(a), width, uint32(v)); err != nil {
			return &busError{fmt.Sprintf("Failed to write memory at 0x%08x", a)}
		}
	}
	return nil
}

func (p *memProbe) Command(ctx context.Context, cmd string) (string, error) {
	p.mu.Lock()
	p.commands = append(p.commands, cmd)
	p.mu.Unlock()
	switch cmd {
	case "reg pc":
		return "pc (/32): 0x08000abc\n", nil
	case "halt", "resume", "reset run", "reset halt", "reset init":
		return "", nil
	}
	return "", &busError{fmt.Sprintf("invalid command name %q", strings.Fields(cmd)[0])}
}

// Halt, Resume and Reset record what they were asked as the OpenOCD
// command it would be, so tests see typed and raw control alike.
func (p *memProbe) Halt(ctx context.Context) error   { return p.control("halt") }
func (p *memProbe) Resume(ctx context.Context) error { return p.control("resume") }
func (p *memProbe) Reset(ctx context.Context, mode string) error {
	return p.control("reset " + mode)
}

func (p *memProbe) control(cmd string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.commands = append(p.commands, cmd)
	return nil
}

func (p *memProbe) Close() error { p.closed = true; return nil }

var symbols = map[string][2]uint64{
	"counter":     {uint64(sim.CounterAddr), 4},
	"blink":       {uint64(sim.BlinkAddr), 4},
	"led_pattern": {0x20000010, 8},
	"status_word": {0x20000008, 2},
}

func lookupSymbol(elf, name string) (uint64, uint64, error) {
	s, ok := symbols[name]
	if !ok {
		return 0, 0, fmt.Errorf("symbol %s not found in %s", name, elf)
	}
	return s[0], s[1], nil
}

func TestMemorySteps(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		setup   func(m *sim.Memory, p *memProbe)
		steps   string
		message string
		check   func(t *testing.T, m *sim.Memory, p *memProbe, res *runner.SequenceResult)
	}{
		{
			name: "seed forms write the LED and read it back",
			src: `[
  {"mem_write": true, "address": "0x48000014", "value": "0x20", "probe": "yellow", "width": 32},
  {"mem_read": true, "address": "0x48000014", "count": 2, "probe": "yellow", "width": 32, "label": "gpio"}
]`,
			steps: "0:passed 1:passed",
			check: func(t *testing.T, m *sim.Memory, p *memProbe, res *runner.SequenceResult) {
				if !m.LED() {
					t.Error("the LED is off after writing ODR")
				}
				d := res.Steps[1].Data
				if d["label"] != "gpio" || fmt.Sprint(d["values"]) != "[32 0]" {
					t.Errorf("read data = %v", d)
				}
				if res.Steps[1].Message != "gpio: 0x00000020 0x00000000" {
					t.Errorf("message = %q", res.Steps[1].Message)
				}
			},
		},
		{
			name: "symbols give address, width and count",
			src: `
probes: {board: {openocd: "127.0.0.1:4444", elf: fw.elf}}
steps:
  - mem_write: true
    symbol: blink
    value: 1
    verify: true
  - mem_read: true
    symbol: blink
    expect: 1
    save: b
  - mem_write: true
    symbol: status_word
    value: 0xbeef
  - mem_read: true
    symbol: status_word
    expect: 0xbeef
  - mem_read: true
    symbol: led_pattern
    width: 8
    save: pattern
  - assert: b == 1 && len(pattern) == 8`,
			steps: "0:passed 1:passed 2:passed 3:passed 4:passed 5:passed",
			check: func(t *testing.T, m *sim.Memory, p *memProbe, res *runner.SequenceResult) {
				if w := res.Steps[2].Data["width"]; w != 16 {
					t.Errorf("status_word width = %v, want 16 from its size", w)
				}
			},
		},
		{
			name: "address expressions and masks",
			src: `
vars: {gpio: 0x48000000}
steps:
  - mem_write: gpio + 0x18
    value: 0x20
  - mem_read: gpio + 0x14
    expect: {mask: 0x20, value: 0x20}
  - mem_read: gpio + 0x14
    expect: 0`,
			steps:   "0:passed 1:passed 2:failed",
			message: "read 0x00000020, expected 0x00000000",
		},
		{
			name: "a bus fault fails the step with the debugger's words",
			src: `
steps:
  - mem_read: 0x30000000`,
			steps:   "0:failed",
			message: "Failed to read memory at 0x30000000",
		},
		{
			name: "verify catches a read-only register",
			src: `
steps:
  - mem_write: 0x48000018
    value: 0x20
    verify: true`,
			steps:   "0:failed",
			message: "wrote 0x00000020, read back 0x00000000",
		},
		{
			name: "poll until the firmware's counter passes a value",
			src: `
steps:
  - mem_poll: 0x20000000
    until: value >= 20
    timeout: 30s
    save: c
  - assert: c >= 20`,
			steps: "0:passed 1:passed",
		},
		{
			name: "a poll that never holds fails at its timeout",
			src: `
steps:
  - mem_poll: 0x20000004
    expect: 7
    timeout: 50ms`,
			steps:   "0:failed",
			message: "never met 0x00000007",
		},
		{
			name: "debugger commands",
			src: `
steps:
  - halt: true
  - openocd: reg pc
    expect: 'pc \(/32\): (0x[0-9a-f]+)'
    regex: true
    save: pc
  - reset: init
  - resume: true
  - assert: pc == "0x08000abc"
  - openocd: frobnicate`,
			steps:   "0:passed 1:passed 2:passed 3:passed 4:passed 5:failed",
			message: `invalid command name "frobnicate"`,
			check: func(t *testing.T, m *sim.Memory, p *memProbe, res *runner.SequenceResult) {
				if got := strings.Join(p.commands, ","); got != "halt,reg pc,reset init,resume,frobnicate" {
					t.Errorf("commands = %s", got)
				}
			},
		},
		{
			name: "a lost debugger is a bench error",
			src: `
steps:
  - mem_read: 0x20000000
  - mem_read: 0x20000000`,
			setup:   func(m *sim.Memory, p *memProbe) { p.down = true },
			steps:   "0:error 1:skipped",
			message: "connection refused",
		},
		{
			name: "a debugger lost until the step's timeout is a bench error",
			src: `
steps:
  - mem_read: 0x20000000
    timeout: 100ms
  - mem_read: 0x20000000`,
			setup:   func(m *sim.Memory, p *memProbe) { p.retrying = true },
			steps:   "0:error 1:skipped",
			message: "connection refused (tried 5 times",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := "t.yaml"
			if strings.HasPrefix(tt.src, "[") {
				file = "t.json"
			}
			seq, err := steps.Parse(file, []byte(tt.src), steps.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			mem := sim.NewMemory()
			probe := &memProbe{mem: mem}
			if tt.setup != nil {
				tt.setup(mem, probe)
			}
			res := runner.Run(context.Background(), seq, runner.Bench{
				OpenProbe: func(ctx context.Context, p *steps.Probe) (runner.Debugger, error) { return probe, nil },
				Symbols:   lookupSymbol,
			}, runner.Options{
				KeepSteps: true,
			})
			if got := statuses(res); got != tt.steps {
				t.Errorf("steps = %q, want %q (%s)", got, tt.steps, res.Error)
			}
			if tt.message != "" {
				found := false
				for _, s := range res.Steps {
					if s.Status == runner.Failed || s.Status == runner.Errored {
						found = true
						if !strings.Contains(s.Message, tt.message) {
							t.Errorf("message = %q, want %q", s.Message, tt.message)
						}
						break
					}
				}
				if !found {
					t.Errorf("no failed step")
				}
			}
			if !probe.closed {
				t.Error("the probe was not closed")
			}
			if tt.check != nil {
				tt.check(t, mem, probe, res)
			}
		})
	}
}
