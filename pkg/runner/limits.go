package runner

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/hilrun/hilrun/pkg/steps"
)

// DefaultMaxValueBytes is the value limit when Options.MaxValueBytes is 0.
const DefaultMaxValueBytes = 1 << 20

// Errors of a run that reached one of its limits; the step that reached it
// ends as an error, and so does the run.
var (
	// ErrValueLimit: a variable or saved value, or a text built from
	// variables, would be larger than Options.MaxValueBytes.
	ErrValueLimit = errors.New("value limit")
	// ErrStepLimit: the run would execute more steps than
	// Options.MaxSteps.
	ErrStepLimit = errors.New("step limit")
)

func (r *run) maxValue() int {
	if r.opts.MaxValueBytes > 0 {
		return r.opts.MaxValueBytes
	}
	return DefaultMaxValueBytes
}

// valueErr is the error for a value of n bytes (or more) past the limit;
// what says what was being done.
func (r *run) valueErr(what string, n int) error {
	return fmt.Errorf("%s: the value is %d bytes or more, past the %w of %d bytes (--max-value raises it)", what, n, ErrValueLimit, r.maxValue())
}

// setVar stores a variable after checking its size; what names the step's
// action in the error.
func (r *run) setVar(what, name string, v any) error {
	if n := valueSize(v, r.maxValue()); n > r.maxValue() {
		return r.valueErr(what+" "+name, n)
	}
	r.setLocal(name, v)
	return nil
}

// setLocal gives variable name its value v, noting it among the branch's
// variables in a branch (branches.NAME.var reads them after the block).
func (r *run) setLocal(name string, v any) {
	r.vars[name] = v
	if r.branch != nil {
		r.branch.wrote[name] = true
	}
}

// expand fills in a template's references, refusing text longer than the
// value limit; other errors are the step's failure. Text without
// references is the file's own, and bounded by its size.
func (r *run) expand(what string, t *steps.Template) (string, error) {
	max := r.maxValue()
	if t.IsStatic() {
		max = 0
	}
	s, err := t.ExpandMax(r.lookup, nil, max)
	var tl *steps.TooLongError
	switch {
	case errors.As(err, &tl):
		return "", r.valueErr(what, tl.Max+1)
	case err != nil:
		return "", &stepError{msg: fmt.Sprintf("%s: %v", what, err)}
	}
	return s, nil
}

// checkPattern refuses a pattern whose references would make it longer
// than the value limit; a regexp's quoting may double a value.
func (r *run) checkPattern(p *steps.PatternSpec) error {
	if p.Text.IsStatic() {
		return nil
	}
	n := len(p.Text.Raw)
	for _, name := range p.Text.Refs() {
		if v, ok := r.lookup(name); ok {
			n += 2 * valueSize(v, r.maxValue())
		}
	}
	if n > r.maxValue() {
		return r.valueErr("pattern "+p.String(), n)
	}
	return nil
}

// countStep counts one more step executed and refuses it past
// Options.MaxSteps. A branch's finally steps count against a budget of
// their own, as the sequence's do (see stepsFinally): they run however
// many steps the branches ran.
func (r *run) countStep() error {
	var n uint64
	if r.branch != nil && r.branch.finally {
		r.branch.finallySteps++
		n = r.branch.finallySteps
	} else {
		n = r.executed.Add(1)
	}
	if r.opts.MaxSteps > 0 && n > r.opts.MaxSteps {
		return fmt.Errorf("the run reached its %w of %d steps (repeat iterations included): this step did not run", ErrStepLimit, r.opts.MaxSteps)
	}
	return nil
}

// valueSize estimates the bytes v holds: the length of text, 8 per number,
// and the sum over lists and maps. It stops counting once past limit.
func valueSize(v any, limit int) int {
	switch v := v.(type) {
	case nil, bool, int, int64, uint64, float64, int32, uint32, uint, int8, int16, uint8, uint16, float32:
		return 8
	case string:
		return len(v)
	case []byte:
		return len(v)
	case []any:
		n := 0
		for _, e := range v {
			if n += valueSize(e, limit); n > limit {
				break
			}
		}
		return n
	case map[string]any:
		n := 0
		for k, e := range v {
			if n += len(k) + valueSize(e, limit); n > limit {
				break
			}
		}
		return n
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.String:
		return rv.Len()
	case reflect.Slice, reflect.Array:
		n := 0
		for i := 0; i < rv.Len() && n <= limit; i++ {
			n += valueSize(rv.Index(i).Interface(), limit)
		}
		return n
	case reflect.Map:
		n := 0
		it := rv.MapRange()
		for it.Next() && n <= limit {
			n += valueSize(it.Key().Interface(), limit) + valueSize(it.Value().Interface(), limit)
		}
		return n
	}
	return 8
}
