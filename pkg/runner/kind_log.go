package runner

import (
	"context"
	"fmt"
	"strings"

	"github.com/hilrun/hilrun/pkg/steps"
)

func init() { leafRunners[steps.KindLog] = (*run).log }

// log writes its line into the reports: the step's result is named by the
// expanded line (after the step's name, when it has one), so every report
// shows it at this point of the run.
func (r *run) log(_ context.Context, s *steps.Step, res *StepResult) error {
	a, ok := s.Args.(*steps.LogArgs)
	if !ok {
		return fmt.Errorf("log step without its text")
	}
	text, err := r.expand("log", a.Text)
	if err != nil {
		return err
	}
	res.Message = text
	res.Name = logName(text)
	if s.Name != "" {
		res.Name = s.Name + ": " + res.Name
	}
	return nil
}

// maxLogName is how many characters of a log line name its step in the
// reports; the whole line is the step's message.
const maxLogName = 200

// logName is line as a step's name: on one line, at most maxLogName
// characters.
func logName(line string) string {
	line = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(line)
	if r := []rune(line); len(r) > maxLogName {
		return string(r[:maxLogName-1]) + "…"
	}
	return line
}
