package repl

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/hilrun/hilrun/pkg/gate/files"
)

func (s *Session) deviceNames() []string {
	var names []string
	for _, d := range s.opts.Seq.Devices {
		names = append(names, d.Name)
	}
	return names
}

func (s *Session) probeNames() []string {
	var names []string
	for _, p := range s.opts.Seq.Probes {
		names = append(names, p.Name)
	}
	return names
}

// meta runs a colon command; it reports whether the session ends.
func (s *Session) meta(ctx context.Context, line string) bool {
	f := strings.Fields(line)
	switch f[0] {
	case ":quit", ":q", ":exit":
		return true
	case ":help":
		s.help()
	case ":vars":
		var keys []string
		for k := range s.vars {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, v := range s.opts.Seq.Vars {
			if _, ok := s.vars[v.Name]; !ok {
				s.say("%s (from the file)", v.Name)
			}
		}
		for _, k := range keys {
			s.say("%s = %q", k, s.vars[k])
		}
		if len(keys) == 0 && len(s.opts.Seq.Vars) == 0 {
			s.say("no variables")
		}
	case ":steps":
		if len(s.history) == 0 {
			s.say("no steps run yet")
		}
		for i, e := range s.history {
			s.say("%d %s %s", i+1, flow(e.node), e.status)
		}
	case ":list":
		if len(s.fileSeq) == 0 {
			s.say("no file loaded: start hilrun repl FILE")
		}
		for i, n := range s.fileSeq {
			mark := " "
			if i == s.next {
				mark = ">"
			}
			s.say("%s %d %s", mark, i+1, flow(n))
		}
	case ":next":
		if s.next >= len(s.fileSeq) {
			s.say("no more steps in the file")
			return false
		}
		n := s.fileSeq[s.next]
		s.next++
		fmt.Fprintf(s.t, "hilrun> %s\n", flow(n))
		s.runNodes(ctx, []*yaml.Node{n})
	case ":record":
		expects, path := false, ""
		for _, a := range f[1:] {
			if a == "--expects" {
				expects = true
			} else {
				path = a
			}
		}
		if path == "" {
			s.say("usage: :record [--expects] FILE")
			return false
		}
		if err := s.record(path, expects); err != nil {
			s.say("record: %v", err)
			return false
		}
		s.say("wrote %s", path)
	case ":raw":
		if s.opts.Script {
			s.say(":raw needs a terminal")
			s.badLine = true
			return false
		}
		s.raw()
	default:
		s.say("unknown command %s: type :help", f[0])
		s.badLine = true
	}
	return false
}

func (s *Session) help() {
	var b strings.Builder
	b.WriteString("hilrun: a line is a command or a step in flow form, e.g. {send: AT, expect: OK}\n")
	for _, h := range commandHelp {
		fmt.Fprintf(&b, "  %-28s %s\n", h.name+" "+h.args, h.what)
	}
	for _, h := range metaHelp {
		fmt.Fprintf(&b, "  %-28s %s\n", h.name+" "+h.args, h.what)
	}
	b.WriteString("  Ctrl-C cancels the running step; Tab completes; Ctrl-D quits.\n")
	fmt.Fprint(s.t, b.String())
}

// raw passes keystrokes to the current device until Ctrl-].
func (s *Session) raw() {
	done := make(chan struct{})
	s.mu.Lock()
	dev := s.current
	s.mu.Unlock()
	s.say("raw mode on %s: keys go to the device; Ctrl-] returns to hilrun", dev)
	s.outputs[dev].flush()
	s.mu.Lock()
	s.mode, s.rawDone = modeRaw, done
	s.mu.Unlock()
	<-done
	fmt.Fprint(s.t, "\n")
	s.say("raw mode off")
}

func (s *Session) isRaw() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mode == modeRaw
}

// flow is a step node on one line.
func flow(n *yaml.Node) string {
	c := *n
	c.Style = yaml.FlowStyle
	b, err := yaml.Marshal(&c)
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}

// fileStepNodes returns the nodes of a sequence file's steps, for :next.
func fileStepNodes(fs files.Policy, path string) []*yaml.Node {
	data, err := fs.ReadFile(path)
	if err != nil {
		return nil
	}
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return nil
	}
	root := doc.Content[0]
	if root.Kind == yaml.SequenceNode {
		return root.Content
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "steps" {
			return root.Content[i+1].Content
		}
	}
	return nil
}
