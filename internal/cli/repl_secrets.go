package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"github.com/hilrun/hilrun/pkg/redact"
)

// addBenchSecrets adds to the session's secrets (every --secret and those
// the file's secrets: names, each of which must have a value, as in run)
// the bench file's others, which a typed line may send as ${name}. One of
// those that cannot be read (a variable not set, a file not there, a value
// too short) is left out with a note: the session goes on without it.
func (rs *replSession) addBenchSecrets(warn io.Writer) {
	if rs.bench == nil || len(rs.bench.Secrets) == 0 {
		return
	}
	var names []string
	for name := range rs.bench.Secrets {
		if _, ok := rs.secrets.Lookup(name); !ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	var list []redact.Secret
	for _, name := range names {
		src := rs.bench.Secrets[name]
		v, err := readSecret(hostGates(), src, filepath.Dir(rs.bench.File))
		if err == nil {
			_, err = redact.New([]redact.Secret{{Name: name, Value: v}})
		}
		if err != nil {
			fmt.Fprintf(warn, "hilrun: %s: secret %s is left out of the session: %v\n", src.Pos, name, err)
			continue
		}
		list = append(list, redact.Secret{Name: name, Value: v})
	}
	more, err := redact.New(list)
	if err != nil {
		return // each was checked above
	}
	rs.secrets = more.Merge(rs.secrets)
}
