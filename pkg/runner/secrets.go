package runner

import (
	"github.com/hilrun/hilrun/pkg/redact"
)

// secret is the value ${name} gives when name is one of the sequence's
// secrets: (which the loader lets only sends and commands use). A name
// the sequence does not declare is no secret to it, whatever the run's
// secrets hold: else a variable of that name, copied by a set: or an
// expect and compared in an assert, would read the value, and the pass or
// fail of a step would tell it.
func (r *run) secret(name string) (string, bool) {
	for _, s := range r.seq.Secrets {
		if s.Name == name {
			return r.opts.Secrets.Lookup(name)
		}
	}
	return "", false
}

// redactEvent is e with every secret's value replaced by ***name***: its
// step result (a copy), its console data and its sequence result. The
// consoles mask their output before the runner sees it; this catches what
// the runner made itself: sent text, step names with values, messages,
// saved and matched values, the variables a failed assert shows.
func (r *run) redactEvent(e Event) Event {
	s := r.opts.Secrets
	if s.Empty() {
		return e
	}
	if e.Step != nil {
		st := *e.Step
		redactStep(s, &st)
		e.Step = &st
	}
	if e.Data != nil {
		e.Data = s.Bytes(e.Data)
	}
	return e
}

// redactStep replaces each secret's value in st by ***name***.
func redactStep(s *redact.Set, st *StepResult) {
	st.Name = s.String(st.Name)
	st.Group = s.String(st.Group)
	st.Message = s.String(st.Message)
	st.Expected = s.String(st.Expected)
	st.Received = s.String(st.Received)
	st.Saved = s.Map(st.Saved)
	st.Data = s.Map(st.Data)
	st.Attempts = redactAttempts(s, st.Attempts)
	st.Params = redactParams(s, st.Params)
	if m := st.Measurement; m != nil {
		cp := *m
		cp.Name = s.String(cp.Name)
		if v, ok := cp.Value.(string); ok {
			cp.Value = s.String(v)
		}
		if v, ok := cp.Equals.(string); ok {
			cp.Equals = s.String(v)
		}
		st.Measurement = &cp
	}
}

// redactAttempts is a copy of list with each secret's value replaced by
// ***name*** in what an attempt says and printed.
func redactAttempts(s *redact.Set, list []AttemptResult) []AttemptResult {
	if len(list) == 0 {
		return list
	}
	out := make([]AttemptResult, len(list))
	for i, a := range list {
		a.Name = s.String(a.Name)
		a.Message = s.String(a.Message)
		a.Output = s.String(a.Output)
		out[i] = a
	}
	return out
}

// redactResult replaces each secret's value in res, in place, before it
// is told and returned.
func (r *run) redactResult(res *SequenceResult) {
	s := r.opts.Secrets
	if s.Empty() {
		return
	}
	res.Name = s.String(res.Name)
	res.Error = s.String(res.Error)
	res.Attempts = redactAttempts(s, res.Attempts)
	for i := range res.Steps {
		redactStep(s, &res.Steps[i])
	}
	for i := range res.Transcripts {
		res.Transcripts[i].Data = s.Mask(res.Transcripts[i].Data)
	}
}
