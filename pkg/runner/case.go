package runner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/hilrun/hilrun/pkg/redact"
	"github.com/hilrun/hilrun/pkg/steps"
)

// Param is one value a matrix case sets: its key and the value, as the
// sequence file has it (a string, a number or a boolean).
type Param struct {
	Key   string
	Value any
}

// Params are a matrix case's values, in the order its matrix wrote its
// keys. JSON holds them as one object whose keys keep that order
// ({"baud": 9600, "fw": "2.4.1"}); a number that JSON cannot hold (NaN,
// ±Inf) is a string.
type Params []Param

// MarshalJSON writes p as one object, its keys in order.
func (p Params) MarshalJSON() ([]byte, error) {
	if p == nil {
		return []byte("null"), nil
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, kv := range p {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(kv.Key)
		if err != nil {
			return nil, err
		}
		v := kv.Value
		if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
			v = strconv.FormatFloat(f, 'g', -1, 64)
		}
		val, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("matrix value %s: %w", kv.Key, err)
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(val)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads an object MarshalJSON wrote, keeping the order of
// its keys; numbers read back as json.Number.
func (p *Params) UnmarshalJSON(b []byte) error {
	if string(bytes.TrimSpace(b)) == "null" {
		*p = nil
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		return fmt.Errorf("matrix values: want an object")
	}
	out := Params{}
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return fmt.Errorf("matrix values: %w", err)
		}
		key, _ := tok.(string)
		var v any
		if err := d.Decode(&v); err != nil {
			return fmt.Errorf("matrix value %s: %w", key, err)
		}
		out = append(out, Param{Key: key, Value: v})
	}
	*p = out
	return nil
}

// enterCase gives the result of group s what makes it a case in the
// reports: its tags as -m matches them (its own, then those of the
// groups around it and the sequence's), and a matrix case's values. It
// returns the tags around it before, for leaveCase.
func (r *run) enterCase(s *steps.Step, res *StepResult) []string {
	outer := r.caseTags
	if outer == nil {
		outer = r.seq.Tags
	}
	tags := steps.UnionTags(s.Tags, outer)
	if len(tags) > 0 {
		res.Tags = tags
	}
	for _, v := range s.Case {
		res.Params = append(res.Params, Param{Key: v.Key, Value: v.Value})
	}
	prev := r.caseTags
	r.caseTags = tags
	return prev
}

// leaveCase restores the tags around a group once it has run.
func (r *run) leaveCase(prev []string) { r.caseTags = prev }

// redactParams is a copy of p with each secret's value in its text
// values replaced by ***name***.
func redactParams(s *redact.Set, p Params) Params {
	if len(p) == 0 {
		return p
	}
	out := make(Params, len(p))
	for i, kv := range p {
		if v, ok := kv.Value.(string); ok {
			kv.Value = s.String(v)
		}
		out[i] = kv
	}
	return out
}
