package runner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/hilrun/hilrun/pkg/steps"
)

// SymbolLookup finds a symbol's address and size in bytes in an ELF file.
type SymbolLookup func(elfPath, name string) (addr, size uint64, err error)

// testFailure is implemented by errors that mean the target misbehaved (a
// bus fault, a command the debugger refused) rather than that the bench
// broke: they fail the step instead of erroring it.
type testFailure interface {
	TestFailure() bool
}

func isTestFailure(err error) bool {
	var tf testFailure
	return errors.As(err, &tf) && tf.TestFailure()
}

// DefaultPollInterval is how often mem_poll reads when the step does not
// say.
const DefaultPollInterval = 5 * time.Millisecond

func (r *run) probe(name string) (Debugger, error) {
	d := r.probes[name]
	if d == nil {
		return nil, fmt.Errorf("probe %s is not open", name)
	}
	return d, nil
}

// memTarget is a resolved memory location.
type memTarget struct {
	addr  uint64
	width int
	count int // from the symbol's size, 0 when unknown
	what  string
}

func (r *run) resolveMem(ctx context.Context, s *steps.Step) (memTarget, error) {
	m := s.Mem
	t := memTarget{addr: m.Addr, width: m.Width, what: s.Title()}
	switch {
	case m.Symbol != "":
		elf := m.ELF
		if elf == "" {
			if p := r.seq.Probe(s.To); p != nil {
				elf = p.ELF
			}
		}
		if elf == "" {
			return t, &stepError{msg: fmt.Sprintf("symbol %s: no ELF file: set elf: on the step or on probe %s", m.Symbol, s.To)}
		}
		if r.bench.Symbols == nil {
			return t, fmt.Errorf("symbol %s: no symbol lookup was given", m.Symbol)
		}
		addr, size, err := r.bench.Symbols(elf, m.Symbol)
		if err != nil {
			return t, &stepError{msg: err.Error()}
		}
		t.addr = addr
		if t.width == 0 {
			switch size {
			case 1, 2, 4, 8:
				t.width = int(size) * 8
			default:
				t.width = 32
			}
		}
		if per := uint64(t.width / 8); size > per && m.Offset == 0 {
			t.count = int(size / per)
		}
	case m.Address != nil:
		out, err := r.eval(ctx, "address "+m.Address.Src, m.Address, nil)
		if err != nil {
			return t, err
		}
		a, err := toUint(out)
		if err != nil {
			return t, &stepError{msg: fmt.Sprintf("address %s: %v", m.Address.Src, err)}
		}
		t.addr = a
	}
	t.addr = uint64(int64(t.addr) + m.Offset)
	if t.width == 0 {
		t.width = 32
	}
	return t, nil
}

// toUint converts an expression result or variable to an address or value.
func toUint(v any) (uint64, error) {
	switch v := v.(type) {
	case int:
		if v >= 0 {
			return uint64(v), nil
		}
	case int64:
		if v >= 0 {
			return uint64(v), nil
		}
	case uint64:
		return v, nil
	case uint32:
		return uint64(v), nil
	case int32:
		if v >= 0 {
			return uint64(v), nil
		}
	case float64:
		if v >= 0 && v == math.Trunc(v) && v < math.MaxUint64 {
			return uint64(v), nil
		}
	case string:
		n, err := steps.Num(v)
		if err != nil {
			return 0, err
		}
		return toUint(n)
	}
	return 0, fmt.Errorf("%v is not a non-negative whole number", v)
}

func (r *run) probeCtx(ctx context.Context, s *steps.Step) (context.Context, context.CancelFunc) {
	timeout := s.Timeout
	if timeout == 0 {
		timeout = r.seq.ExpectTimeout
	}
	return context.WithTimeoutCause(ctx, timeout, errStepTimeout)
}

// benchFault is implemented by errors that mean the bench broke (the
// debugger cannot be reached, even after retries), whatever the step's
// timeout did meanwhile: such a step errors rather than fails.
type benchFault interface {
	BenchFault() bool
}

func isBenchFault(err error) bool {
	var bf benchFault
	return errors.As(err, &bf) && bf.BenchFault()
}

// probeErr words a debugger error for the step's result.
func probeErr(ctx, pctx context.Context, what string, err error) error {
	switch {
	case isTestFailure(err):
		return &stepError{msg: fmt.Sprintf("%s: %v", what, err)}
	case isBenchFault(err) && ctx.Err() == nil:
		return fmt.Errorf("%s: %w", what, err)
	case errors.Is(context.Cause(pctx), errStepTimeout) && ctx.Err() == nil:
		return &stepError{msg: fmt.Sprintf("%s: the debugger did not answer in time: %v", what, err)}
	case ctx.Err() != nil:
		return fmt.Errorf("%s: %w", what, context.Cause(ctx))
	}
	return fmt.Errorf("%s: %w", what, err)
}

func hexList(vs []uint64, width int) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = fmt.Sprintf("0x%0*x", width/4, v)
	}
	return strings.Join(parts, " ")
}

// memStep returns the probe and the memory a memory step works on.
func (r *run) memStep(ctx context.Context, s *steps.Step) (Debugger, memTarget, error) {
	d, err := r.probe(s.To)
	if err != nil {
		return nil, memTarget{}, err
	}
	t, err := r.resolveMem(ctx, s)
	return d, t, err
}

func (r *run) memRead(ctx context.Context, s *steps.Step, res *StepResult) error {
	d, t, err := r.memStep(ctx, s)
	if err != nil {
		return err
	}
	count := s.Mem.Count
	if count == 0 {
		count = max(t.count, 1)
	}
	pctx, cancel := r.probeCtx(ctx, s)
	defer cancel()
	vals, err := d.ReadMemory(pctx, t.addr, t.width, count)
	if err != nil {
		return probeErr(ctx, pctx, fmt.Sprintf("read %s at 0x%08x", t.what, t.addr), err)
	}
	res.Data = memData(t, vals, s.Mem.Label)
	noteAccess(res, d)
	res.Message = fmt.Sprintf("%s: %s", res.Data["label"], hexList(vals, t.width))
	if s.Mem.SaveVar != "" {
		if err := r.saveValues(res, s.Mem.SaveVar, vals); err != nil {
			return err
		}
	}
	if c := s.Mem.Check; c != nil {
		w, err := r.memWant(c)
		if err != nil {
			return err
		}
		if ok, want := checkValues(w, vals); !ok {
			return &stepError{
				msg:      fmt.Sprintf("%s at 0x%08x: read %s, expected %s", t.what, t.addr, hexList(vals, t.width), want),
				expected: want, received: hexList(vals, t.width),
			}
		}
	}
	return nil
}

// maxPollSamples bounds the values a mem_poll step records for the reports'
// plots.
const maxPollSamples = 256

func memData(t memTarget, vals []uint64, label string) map[string]any {
	if label == "" {
		label = t.what
	}
	return map[string]any{
		"address": t.addr, "width": t.width, "values": vals, "label": label,
	}
}

func (r *run) saveValues(res *StepResult, name string, vals []uint64) error {
	var v any = vals[0]
	if len(vals) > 1 {
		list := make([]any, len(vals))
		for i, x := range vals {
			list[i] = x
		}
		v = list
	}
	if err := r.setVar("save", name, v); err != nil {
		return err
	}
	if res.Saved == nil {
		res.Saved = map[string]any{}
	}
	res.Saved[name] = v
	return nil
}

func (r *run) memWrite(ctx context.Context, s *steps.Step, res *StepResult) error {
	d, t, err := r.memStep(ctx, s)
	if err != nil {
		return err
	}
	vals := make([]uint64, 0, len(s.Mem.Values))
	for _, v := range s.Mem.Values {
		n, err := r.valueOf("value", v)
		if err != nil {
			return err
		}
		vals = append(vals, n)
	}
	if t.width < 64 {
		for _, v := range vals {
			if v>>uint(t.width) != 0 {
				return &stepError{msg: fmt.Sprintf("value 0x%x does not fit in %d bits", v, t.width)}
			}
		}
	}
	pctx, cancel := r.probeCtx(ctx, s)
	defer cancel()
	if err := d.WriteMemory(pctx, t.addr, t.width, vals); err != nil {
		return probeErr(ctx, pctx, fmt.Sprintf("write %s at 0x%08x", t.what, t.addr), err)
	}
	res.Data = memData(t, vals, s.Mem.Label)
	noteAccess(res, d)
	res.Message = fmt.Sprintf("wrote %s", hexList(vals, t.width))
	if !s.Mem.Verify {
		return nil
	}
	back, err := d.ReadMemory(pctx, t.addr, t.width, len(vals))
	if err != nil {
		return probeErr(ctx, pctx, fmt.Sprintf("verify %s at 0x%08x", t.what, t.addr), err)
	}
	res.Data["read_back"] = back
	noteAccess(res, d)
	for i := range vals {
		if back[i] != vals[i] {
			return &stepError{
				msg:      fmt.Sprintf("verify %s at 0x%08x: wrote %s, read back %s", t.what, t.addr, hexList(vals, t.width), hexList(back, t.width)),
				expected: hexList(vals, t.width), received: hexList(back, t.width),
			}
		}
	}
	res.Message += ", verified"
	return nil
}

// noteAccess says in the step's data when d had to stop a running target
// for the step's last memory access (and resumed it after).
func noteAccess(res *StepResult, d Debugger) {
	if accessHalted(d) {
		res.Data["halted_for_access"] = true
	}
}
