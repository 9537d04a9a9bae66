package cli

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/hilrun/hilrun/pkg/gate"
	"github.com/hilrun/hilrun/pkg/mcpserver"
	"github.com/hilrun/hilrun/pkg/redact"
	"github.com/hilrun/hilrun/pkg/steps"
)

// secretUsage is the help of --secret, for run, repl, validate and mcp.
const secretUsage = "give a secret's value, `NAME=env:VARIABLE` or NAME=file:PATH (repeatable); ${NAME} sends it, and every report, log and reply shows ***NAME*** or '*' instead"

// registerSecrets adds --secret to f.
func registerSecrets(f *pflag.FlagSet, into *[]string) {
	f.StringArrayVar(into, "secret", nil, secretUsage)
}

// parseSecretFlags reads --secret NAME=env:VAR and NAME=file:PATH.
func parseSecretFlags(items []string) (map[string]*steps.SecretSource, error) {
	out := map[string]*steps.SecretSource{}
	for _, it := range items {
		name, spec, ok := strings.Cut(it, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("--secret %q: expected NAME=env:VARIABLE or NAME=file:PATH", it)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("--secret %s is given twice", name)
		}
		src, err := steps.ParseSecretSource(spec)
		if err != nil {
			return nil, fmt.Errorf("--secret %s: %w", it, err)
		}
		out[name] = src
	}
	return out, nil
}

// readSecrets reads the values of the secrets: every --secret, then for
// each of names that no flag gives, the bench file's source. A name
// neither gives is left out (plan.Bind says it is missing); a source that
// cannot be read, or a value too short, is an error.
func readSecrets(g gate.Policy, flags map[string]*steps.SecretSource, bench *steps.Bench, names []string) (*redact.Set, error) {
	var list []redact.Secret
	for _, name := range steps.Names(sourceNames(flags)) {
		v, err := readSecret(g, flags[name], "")
		if err != nil {
			return nil, fmt.Errorf("--secret %s=%s: %w", name, flags[name], err)
		}
		list = append(list, redact.Secret{Name: name, Value: v})
	}
	for _, name := range names {
		if _, ok := flags[name]; ok || bench == nil || slices.ContainsFunc(list, func(s redact.Secret) bool { return s.Name == name }) {
			continue
		}
		src, ok := bench.Secrets[name]
		if !ok {
			continue
		}
		v, err := readSecret(g, src, filepath.Dir(bench.File))
		if err != nil {
			return nil, steps.ErrorList{{Pos: src.Pos, Msg: fmt.Sprintf("secret %s: %v", name, err)}}
		}
		list = append(list, redact.Secret{Name: name, Value: v})
	}
	return redact.New(list)
}

// readSecret reads one value through the gates: an environment variable,
// or a file (relative to dir when not absolute) without its final line
// break.
func readSecret(g gate.Policy, src *steps.SecretSource, dir string) (string, error) {
	switch src.Kind {
	case "env":
		v, ok := g.Env.Lookup(src.Ref)
		if !ok || v == "" {
			return "", fmt.Errorf("the environment variable %s is not set", src.Ref)
		}
		return v, nil
	default:
		path := src.Ref
		if dir != "" && !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		b, err := g.Files.ReadFile(path)
		if err != nil {
			return "", fmt.Errorf("read the secret's file: %w", err)
		}
		s := strings.TrimSuffix(string(b), "\n")
		return strings.TrimSuffix(s, "\r"), nil
	}
}

// sourceNames turns a map of sources into one of their texts, for
// steps.Names.
func sourceNames(m map[string]*steps.SecretSource) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v.String()
	}
	return out
}

// mcpSecrets reads the server's secrets into cfg: every --secret, and
// every secret its --bench names; a client's files never give one.
func mcpSecrets(cfg *mcpserver.Config, flags []string) error {
	srcs, err := parseSecretFlags(flags)
	if err != nil {
		return err
	}
	var names []string
	if cfg.Bench != nil {
		for name := range cfg.Bench.Secrets {
			names = append(names, name)
		}
		slices.Sort(names)
	}
	cfg.Secrets, err = readSecrets(hostGates(), srcs, cfg.Bench, names)
	return err
}
