package report

import (
	"fmt"
	"strings"

	"github.com/jstemmer/go-junit-report/v2/junit"

	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
)

// interruptedCaseName names the testcase that stands for an interrupt. It
// sorts before the steps' testcases ("(" is below the digits), as the
// interrupt comes first in the suite.
const interruptedCaseName = "(interrupted)"

// interruption gathers, while a sequence's steps are read, what its JUnit
// suite says when the run was interrupted (Ctrl-C, SIGTERM).
type interruption struct {
	// step is the step that was running when the interrupt came; nil when
	// it came between steps or while the devices opened.
	step *results.Step
	// finally is the first finally step that did not pass: it ran after
	// the interrupt, and is not its cause.
	finally *results.Step
}

func (in *interruption) observe(st *results.Step) {
	keep := func() *results.Step {
		c := *st
		c.Saved, c.Data, c.Repeat = nil, nil, nil
		return &c
	}
	switch {
	case in.step == nil && st.Status == runner.Interrupted:
		in.step = keep()
	case in.finally == nil && strings.HasPrefix(st.Path, finallyPrefix) && isProblem(st.Status):
		in.finally = keep()
	}
}

// testcase is the first testcase of an interrupted sequence's suite, an
// error of type "interrupted" that says where the run stopped, and which
// finally step then went wrong, if one did; nil when the sequence was not
// interrupted. It stands in for the sequence's error, which may be the
// first finally step's error rather than the interrupt.
func (in *interruption) testcase(s *seqSummary) *junit.Testcase {
	seq := &s.seq
	if seq.Status != runner.Interrupted {
		return nil
	}
	msg := "interrupted"
	if st := in.step; st != nil {
		msg = fmt.Sprintf("interrupted during step %s %s", cleanLine(st.Path), cleanLine(st.Kind))
		if st.Name != "" {
			msg += " " + cleanLine(st.Name)
		}
	} else if !s.steps {
		msg = "interrupted before any step ran"
	}
	body := msg + "\n"
	if st := in.step; st != nil {
		if loc := location(st, seq.File); loc != "" {
			body += "at " + loc + "\n"
		}
	} else if f := cleanLine(seq.File); f != "" {
		body += "at " + f + "\n"
	}
	// The runner tells a finally step's error after the interrupt, which
	// the body below tells from the step itself.
	also, _, _ := strings.Cut(seq.Error, "; after the interrupt, ")
	if f := in.finally; f != nil {
		body += fmt.Sprintf("after the interrupt, finally step %s %s", cleanLine(f.Path), cleanLine(f.Kind))
		if f.Name != "" {
			body += " " + cleanLine(f.Name)
		}
		body += fmt.Sprintf(" %s: %s\n", reportStatus(f.Status), problemMessage(f))
		if also == f.Message {
			also = ""
		}
	}
	if also != "" && also != "interrupted" {
		body += "then: " + cleanText(also) + "\n"
	}
	return &junit.Testcase{Name: interruptedCaseName, Classname: cleanLine(seq.Name), Time: seconds(0),
		Error: &junit.Result{Message: msg, Type: typeInterrupted, Data: body}}
}
