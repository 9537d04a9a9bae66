package engine

import (
	"strings"
	"time"

	"github.com/hilrun/hilrun/pkg/redact"
	"github.com/hilrun/hilrun/pkg/steps"
	"github.com/hilrun/hilrun/pkg/stream"
)

// SecretFlush is how long a console of dev holds back what could be the
// start of a secret once the device is quiet: its settle time (1 s unless
// it sets one). Only output that ends as a secret begins waits so long.
func SecretFlush(dev *steps.Device) time.Duration {
	if dev.Settle != nil && *dev.Settle > 0 {
		return *dev.Settle
	}
	return stream.DefaultSettle
}

// withoutSecrets is env without the variables that hold a secret's
// value, so that neither ${env.NAME} nor env in expressions reads one.
func withoutSecrets(env []string, secrets *redact.Set) []string {
	if secrets.Empty() {
		return env
	}
	out := env[:0:0]
	for _, kv := range env {
		if _, v, _ := strings.Cut(kv, "="); !secrets.Contains(v) {
			out = append(out, kv)
		}
	}
	return out
}
