package mcpserver

import (
	"fmt"
	"strings"

	"github.com/hilrun/hilrun/pkg/steps"
)

// stepCaps is everything a step of any kind can do.
var stepCaps = func() steps.Cap {
	var c steps.Cap
	for _, k := range steps.Kinds() {
		c |= k.Caps
	}
	return c
}()

// postures are the server configurations the capability matrix shows, each
// a policy and the flags that make it.
var postures = []struct {
	flags  string
	policy Policy
}{
	{"(default)", Policy{}},
	{"--root DIR", Policy{Roots: []string{"/"}}},
	{"--allow-exec --root DIR", Policy{AllowExec: true, Roots: []string{"/"}}},
	{"--allow-debug-tcl", Policy{AllowDebugTcl: true}},
	{"--read-only --root DIR --allow-exec --allow-debug-tcl", Policy{ReadOnly: true, AllowExec: true, AllowDebugTcl: true, Roots: []string{"/"}}},
}

// CapabilityMatrix is the capability matrix of docs/security.md in Markdown: what
// each server posture allows, and which step kinds and tools can do what.
// A golden test keeps the copy in docs/security.md equal to it.
func CapabilityMatrix() string {
	var b strings.Builder
	b.WriteString("| capability | what it is |")
	for _, p := range postures {
		fmt.Fprintf(&b, " `%s` |", p.flags)
	}
	b.WriteString("\n|---|---|")
	b.WriteString(strings.Repeat("---|", len(postures)))
	b.WriteByte('\n')
	for _, c := range steps.Caps() {
		fmt.Fprintf(&b, "| %s | %s |", c, c.Doc())
		for _, p := range postures {
			if p.policy.Allow("", c) == nil {
				b.WriteString(" yes |")
			} else {
				b.WriteString(" no |")
			}
		}
		b.WriteByte('\n')
	}
	b.WriteString("\n| step kind or tool | can do | notes |\n|---|---|---|\n")
	for _, k := range steps.Kinds() {
		fmt.Fprintf(&b, "| step `%s` | %s | %s |\n", k.Keys[0], k.Caps, k.Note)
	}
	for _, g := range toolGroups {
		for _, t := range g {
			c := t.can
			what, note := c.caps.String(), ""
			if c.perStep {
				note = "each step checked by its kind"
				if c.caps == stepCaps {
					what = "what its steps do"
				}
			}
			if c.every != 0 {
				note = strings.TrimPrefix(note+"; every call needs "+c.every.String(), "; ")
			}
			fmt.Fprintf(&b, "| tool `%s` | %s | %s |\n", t.spec.Name, what, note)
		}
	}
	return b.String()
}
