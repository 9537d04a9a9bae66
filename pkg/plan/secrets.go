package plan

import (
	"fmt"

	"github.com/hilrun/hilrun/pkg/steps"
)

// MissingSecretError is a secret the sequence names that no source gave.
type MissingSecretError struct {
	Name string
	Pos  steps.Pos
}

func (e *MissingSecretError) Error() string {
	return fmt.Sprintf("%s: secret %s has no value: give --secret %s=env:VARIABLE or --secret %s=file:PATH, or its source under secrets: in the bench file", e.Pos, e.Name, e.Name, e.Name)
}

// checkSecrets refuses a sequence whose secrets src does not give, and a
// variable given for the run under a secret's name. A sequence that is
// skipped (quarantined, deselected) sends nothing and needs none.
func checkSecrets(seq *steps.Sequence, src Sources) error {
	if seq.Skip != "" {
		return nil
	}
	for _, s := range seq.Secrets {
		if _, ok := src.Secrets.Lookup(s.Name); !ok {
			return &MissingSecretError{Name: s.Name, Pos: s.Pos}
		}
		if _, ok := src.Vars[s.Name]; ok {
			return fmt.Errorf("%s: --var %s: %s is a secret; give it with --secret", s.Pos, s.Name, s.Name)
		}
	}
	return nil
}
