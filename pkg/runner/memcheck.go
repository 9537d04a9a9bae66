package runner

import (
	"fmt"

	"github.com/hilrun/hilrun/pkg/steps"
)

// memWanted is a mem_read's or mem_poll's expect with its ${var} values
// filled in.
type memWanted struct {
	Values []uint64
	Mask   *uint64
}

// memWant fills in the values of c, which may be nil.
func (r *run) memWant(c *steps.MemCheck) (*memWanted, error) {
	if c == nil {
		return nil, nil
	}
	w := &memWanted{Mask: c.Mask}
	for _, v := range c.Values {
		n, err := r.valueOf("expect", v)
		if err != nil {
			return nil, err
		}
		w.Values = append(w.Values, n)
	}
	return w, nil
}

// valueOf is the number v stands for: its value, or its text with the
// variables filled in, read as a number.
func (r *run) valueOf(what string, v steps.ValueSpec) (uint64, error) {
	if v.Text == nil {
		return v.Value, nil
	}
	text, err := r.expand(what, v.Text)
	if err != nil {
		return 0, err
	}
	n, err := toUint(text)
	if err != nil {
		return 0, &stepError{msg: fmt.Sprintf("%s %s = %q: %v", what, v.Text.Raw, text, err)}
	}
	return n, nil
}

// checkValues compares what was read with what a step expects, and words
// the expectation.
func checkValues(c *memWanted, vals []uint64) (bool, string) {
	want := c.Values
	if len(want) == 1 && len(vals) > 1 {
		want = make([]uint64, len(vals))
		for i := range want {
			want[i] = c.Values[0]
		}
	}
	desc := hexList(c.Values, 32)
	if c.Mask != nil {
		desc = fmt.Sprintf("%s under mask 0x%x", desc, *c.Mask)
	}
	if len(want) != len(vals) {
		return false, fmt.Sprintf("%d values (%s)", len(want), desc)
	}
	for i, v := range vals {
		if c.Mask != nil {
			v &= *c.Mask
		}
		if v != want[i] {
			return false, desc
		}
	}
	return true, desc
}
