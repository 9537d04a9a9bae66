package cli

import (
	"github.com/hilrun/hilrun/pkg/redact"
	"github.com/hilrun/hilrun/pkg/steps"
)

// poolSecrets reads the secrets seq names for the pool bench b, as run
// reads them for one bench: every --secret, then the secrets: of b's bench
// file or inline bench (a path relative to that file). A sequence that is
// skipped needs none.
func poolSecrets(flags map[string]*steps.SecretSource, b *poolBench, seq *steps.Sequence) (*redact.Set, error) {
	var names []string
	if seq.Skip == "" {
		names = steps.SecretNames(seq)
	}
	return readSecrets(hostGates(), flags, b.Bench, names)
}
