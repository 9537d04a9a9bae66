package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/hilrun/hilrun/pkg/steps"
	"github.com/hilrun/hilrun/pkg/stream"
)

// leafRunners runs each kind of step that has no children: one entry per
// leaf kind of steps.Kinds(), which a test checks. Each kind_*.go file
// adds its kinds; the memory kinds, whose runner spans mem.go, poll.go
// and memcheck.go, are here.
var leafRunners = map[steps.Kind]func(r *run, ctx context.Context, s *steps.Step, res *StepResult) error{
	steps.KindMemRead:  (*run).memRead,
	steps.KindMemWrite: (*run).memWrite,
	steps.KindMemPoll:  (*run).memPoll,
}

// leaf runs a step that has no children.
func (r *run) leaf(ctx context.Context, s *steps.Step, res *StepResult) error {
	if fn := leafRunners[s.Kind]; fn != nil {
		return fn(r, ctx, s, res)
	}
	return fmt.Errorf("step kind %q cannot run", s.Kind)
}

// console returns the open console of device name.
func (r *run) console(name string) (Console, error) {
	c := r.consol[name]
	if c == nil {
		return nil, fmt.Errorf("device %s is not open", name)
	}
	return c, nil
}

// quoted shows bytes in double quotes with non-printable bytes escaped.
func quoted(b []byte) string { return `"` + stream.Quote(b) + `"` }

// ms is d in milliseconds, for the step's data.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
