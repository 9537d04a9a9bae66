package steps

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// SecretName is a name under a sequence's secrets:. Its value comes from
// the bench file or --secret, never from the sequence; only a send's text
// and a command's arguments and environment may use it (${name}), so no
// expression, pattern, message or variable ever holds it.
type SecretName struct {
	Name string
	Pos  Pos
}

// SecretSource says where a secret's value comes from: Kind "env" reads
// the environment variable Ref, "file" the file Ref (relative to the
// bench file's folder), its value without a final line break.
type SecretSource struct {
	Kind, Ref string
	Pos       Pos
}

// String is the source as written: env:VAR or file:PATH.
func (s *SecretSource) String() string { return s.Kind + ":" + s.Ref }

// ParseSecretSource reads env:VAR or file:PATH.
func ParseSecretSource(s string) (*SecretSource, error) {
	kind, ref, ok := strings.Cut(s, ":")
	switch {
	case !ok || ref == "":
	case kind == "env":
		if !validName(ref) {
			return nil, fmt.Errorf("%q is not an environment variable's name", ref)
		}
		return &SecretSource{Kind: kind, Ref: ref}, nil
	case kind == "file":
		return &SecretSource{Kind: kind, Ref: ref}, nil
	}
	return nil, fmt.Errorf("a secret's source must be env:VARIABLE or file:PATH, found %q", s)
}

// secretNames reads secrets: a list of names.
func (d *decoder) secretNames(n *yaml.Node) {
	if n.Kind != yaml.SequenceNode {
		d.add(d.pos(n), "secrets must be a list of names, such as [wifi_psk, api_token], found %s", kindName(n))
		return
	}
	seen := map[string]bool{}
	for _, item := range n.Content {
		name, ok := d.str(item, "a secret's name")
		if !ok {
			continue
		}
		switch {
		case !validName(name):
			d.add(d.pos(item), "secret name %q must be letters, digits and underscores, not starting with a digit", name)
		case seen[name]:
			d.add(d.pos(item), "secret %s is listed twice", name)
		default:
			seen[name] = true
			d.seq.Secrets = append(d.seq.Secrets, &SecretName{Name: name, Pos: d.pos(item)})
		}
	}
}

// secretSources reads a bench file's secrets: names mapped to env:VAR or
// file:PATH.
func (d *decoder) secretSources(n *yaml.Node) map[string]*SecretSource {
	out := map[string]*SecretSource{}
	d.namedEntries(n, "secrets", "names to env:VARIABLE or file:PATH", "secret", func(name string, p pair) {
		s, ok := d.str(p.val, "secret "+name)
		if !ok {
			return
		}
		src, err := ParseSecretSource(s)
		if err != nil {
			d.add(d.pos(p.val), "secret %s: %v", name, err)
			return
		}
		src.Pos = d.pos(p.val)
		out[name] = src
	})
	return out
}

// declareSecrets notes the sequence's secrets; a variable of the same
// name is an error, as its value could stand in for the secret's.
func (v *validator) declareSecrets() {
	v.secrets = map[string]bool{}
	for _, s := range v.seq.Secrets {
		v.secrets[s.Name] = true
	}
	for _, vr := range v.seq.Vars {
		if v.secrets[vr.Name] {
			v.add(vr.Pos, "variable %s has the name of a secret: give it another name", vr.Name)
		}
	}
}

// secretRef reports whether name is a secret, and records an error when
// it is used where it may not be.
func (v *validator) secretRef(p Pos, name string) bool {
	if !v.secrets[name] {
		return false
	}
	if v.sendable {
		v.sent[name] = true
	} else {
		v.add(p, "secret %s can only be sent: use ${%s} in a send's text or an exec command; expressions, patterns, messages and variables never see a secret's value", name, name)
	}
	return true
}

// SecretNames are the names under seq's secrets:, in order.
func SecretNames(seq *Sequence) []string {
	var names []string
	for _, s := range seq.Secrets {
		names = append(names, s.Name)
	}
	return names
}
