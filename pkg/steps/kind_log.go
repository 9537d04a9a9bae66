package steps

import "gopkg.in/yaml.v3"

// KindLog writes a line into the run's reports at its point of the run:
// log: "firmware ${fw} booted". The whole kind is this file (and the
// runner's kind_log.go): the pattern for a leaf kind.
const KindLog Kind = "log"

// LogArgs is what a log step holds in Step.Args.
type LogArgs struct {
	// Text is the line, expanded when the step runs.
	Text *Template
}

func init() {
	registerKind(KindSpec{
		Kind:    KindLog,
		Keys:    []string{"log"},
		Doc:     "write a line into the reports",
		Example: `{"log": "firmware ${fw} booted"}`,
		decode: func(d *decoder, s *Step, key string, v *yaml.Node) bool {
			if key != "log" {
				return false
			}
			if t, ok := d.template(v, "log"); ok {
				s.Args = &LogArgs{Text: t}
			}
			return true
		},
		check: func(v *validator, s *Step) {
			if a, ok := s.Args.(*LogArgs); ok {
				v.template(s.Pos, a.Text)
			}
		},
		title: func(s *Step) string {
			if a, ok := s.Args.(*LogArgs); ok {
				return clip(a.Text.Raw)
			}
			return "log"
		},
	})
}
