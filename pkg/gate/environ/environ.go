// Package environ is hilrun's one gate for reading environment variables.
// Nothing else in hilrun calls os.Getenv, os.LookupEnv or os.Environ (a
// test walks the source to keep it so): a package that needs a variable,
// or passes an environment on to a program it starts, takes an Env from
// its caller, and only the commands decide that an Env is the user's own
// (Host). The zero Env is empty, so a forgotten Env leaks nothing.
package environ

import (
	"os"
	"slices"
	"strings"
)

// Env is a set of environment variables as KEY=value entries. The zero
// Env has none. An Env is a value: nothing changes it after it is made.
type Env struct {
	host bool
	list []string
}

// Host is the environment hilrun was started with, read when asked, not
// copied now. Only the commands (internal/cli) and the wiring
// (internal/engine) take it; every library package is handed an Env.
func Host() Env { return Env{host: true} }

// Of is an environment of exactly these KEY=value entries; entries
// without "=" are dropped. Of(nil) is empty.
func Of(entries []string) Env {
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		if strings.Contains(e, "=") {
			out = append(out, e)
		}
	}
	return Env{list: out}
}

// List is the environment as KEY=value entries, never nil (a nil
// environment would give a program started with it hilrun's own).
func (e Env) List() []string {
	if e.host {
		return os.Environ()
	}
	return append(make([]string, 0, len(e.list)), e.list...)
}

// Lookup is the value of name, and whether it is set. When a name is set
// twice, the last entry wins, as for a program started with the list.
func (e Env) Lookup(name string) (string, bool) {
	if e.host {
		return os.LookupEnv(name)
	}
	for i := len(e.list) - 1; i >= 0; i-- {
		if k, v, _ := strings.Cut(e.list[i], "="); k == name {
			return v, true
		}
	}
	return "", false
}

// Get is the value of name, "" when it is not set.
func (e Env) Get(name string) string {
	v, _ := e.Lookup(name)
	return v
}

// Pick is the environment of only the named variables of e that are set,
// each once, in the order named: the minimal environment of a program
// started for an MCP client.
func (e Env) Pick(names ...string) Env {
	out := []string{}
	var seen []string
	for _, n := range names {
		if slices.Contains(seen, n) {
			continue
		}
		seen = append(seen, n)
		if v, ok := e.Lookup(n); ok {
			out = append(out, n+"="+v)
		}
	}
	return Env{list: out}
}

// With is e with the entries added after its own, so they win over its
// values of the same names.
func (e Env) With(entries ...string) Env {
	if len(entries) == 0 {
		return e
	}
	return Of(append(e.List(), entries...))
}

// Map is the environment as a map from name to value.
func (e Env) Map() map[string]string {
	m := map[string]string{}
	for _, kv := range e.List() {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}
