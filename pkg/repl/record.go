package repl

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/stream"
)

// givenPort reports whether the sequence file itself gave device name
// port (see Options.Given).
func (s *Session) givenPort(name, port string) bool {
	if s.opts.Given == nil {
		return false
	}
	d := s.opts.Given.Device(name)
	return d != nil && d.Port == port
}

// givenProbe reports whether the sequence file itself gave probe name the
// GDB stub and OpenOCD addresses it has now.
func (s *Session) givenProbe(name, gdb, openocd string) bool {
	if s.opts.Given == nil {
		return false
	}
	p := s.opts.Given.Probe(name)
	return p != nil && p.GDB == gdb && p.OpenOCD == openocd
}

// record writes the steps that ran so far as a sequence file, with the
// devices and probes as bound. With expects, a send that expected nothing
// gets the first line the device answered as its expect.
func (s *Session) record(path string, expects bool) error {
	devs := mapping(0)
	for _, d := range s.opts.Seq.Devices {
		m := mapping(yaml.FlowStyle)
		if d.Port != "" && s.givenPort(d.Name, d.Port) {
			m.Content = append(m.Content, scalar("port"), scalar(d.Port))
			if d.Baud != 0 {
				m.Content = append(m.Content, scalar("baud"), &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(d.Baud)})
			}
		}
		if d.LineEnding != "" {
			m.Content = append(m.Content, scalar("line_ending"), scalar(d.LineEnding))
		}
		if d.Prompt != nil {
			p := scalar(d.Prompt.Text.Raw)
			if d.Prompt.Regex {
				p = mapping(yaml.FlowStyle, scalar("regex"), p)
			}
			m.Content = append(m.Content, scalar("prompt"), p)
		}
		if d.Echo {
			m.Content = append(m.Content, scalar("echo"), &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"})
		}
		devs.Content = append(devs.Content, scalar(d.Name), m)
	}
	doc := mapping(0, scalar("name"), scalar(strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))))
	doc.Content = append(doc.Content, scalar("devices"), devs)
	if len(s.opts.Seq.Probes) > 0 {
		probes := mapping(0)
		for _, p := range s.opts.Seq.Probes {
			m := mapping(yaml.FlowStyle)
			if p.GDB != "" && s.givenProbe(p.Name, p.GDB, p.OpenOCD) {
				gdb := scalar(p.GDB)
				if p.GDBAttach != "" {
					gdb = mapping(yaml.FlowStyle, scalar("address"), scalar(p.GDB), scalar("attach"), scalar(p.GDBAttach))
				}
				m.Content = append(m.Content, scalar("gdb"), gdb)
			}
			if p.OpenOCD != "" && s.givenProbe(p.Name, p.GDB, p.OpenOCD) {
				m.Content = append(m.Content, scalar("openocd"), scalar(p.OpenOCD))
			}
			if p.ELF != "" && p.ELF != s.opts.SessionELF {
				m.Content = append(m.Content, scalar("elf"), scalar(p.ELF))
			}
			probes.Content = append(probes.Content, scalar(p.Name), m)
		}
		doc.Content = append(doc.Content, scalar("probes"), probes)
	}
	list := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	used := map[string]bool{}
	for i, e := range s.history {
		if e.status != runner.Passed {
			continue
		}
		n := e.node
		if expects && e.cursor >= 0 && !hasKey(n, "expect") && !s.expectedNext(i) {
			if reply := s.reply(i); reply != nil {
				c := *n
				c.Content = append(append([]*yaml.Node(nil), n.Content...), scalar("expect"), reply)
				n = &c
			}
		}
		list.Content = append(list.Content, s.recordNode(n, used))
	}
	if len(list.Content) == 0 {
		return fmt.Errorf("no step has passed yet")
	}
	if secrets := usedSecrets(used); secrets != nil {
		doc.Content = append(doc.Content, scalar("secrets"), secrets)
	}
	doc.Content = append(doc.Content, scalar("steps"), list)
	var b bytes.Buffer
	b.WriteString("# Recorded by hilrun repl.\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return err
	}
	enc.Close()
	return s.opts.Files.WriteFile(path, b.Bytes(), 0o666)
}

// reply is the expect recorded for the send of history entry i, or nil.
// Only what the device printed before the next send on it belongs to this
// one. On a device with a prompt, the reply ends at the next prompt: it is
// the first line printed before it, or the prompt itself when the command
// printed nothing or the send did not go out at the prompt (what came
// before the prompt was then boot output, which a replay need not see
// again). The first send of a session on a device with a prompt went out
// at it, after the console sync, as the first send of a replay does. Without a prompt, it is the first finished line that is neither
// the echo of what was sent nor blank nor a bare prompt (ending in >, #
// or $).
func (s *Session) reply(i int) *yaml.Node {
	e := s.history[i]
	o := s.outputs[e.dev]
	if o == nil {
		return nil
	}
	sent := ""
	for j := 0; j+1 < len(e.node.Content); j += 2 {
		if e.node.Content[j].Value == "send" {
			sent = s.echoed(e.node.Content[j+1].Value)
		}
	}
	data := o.since(e.cursor)
	for _, n := range s.history[i+1:] {
		if n.dev == e.dev && n.cursor >= 0 {
			if end := n.cursor - e.cursor; end >= 0 && end < int64(len(data)) {
				data = data[:end]
			}
			break
		}
	}
	dev := s.opts.Seq.Device(e.dev)
	prompt, hasPrompt, err := runner.DevicePrompt(dev, s.lookup)
	if err != nil {
		return nil
	}
	if hasPrompt {
		m, ok := stream.Find(data, []stream.Pattern{prompt})
		if !ok {
			return nil // the command had not finished
		}
		if e.atPrompt {
			for _, l := range strings.Split(string(data[:m.Start]), "\n") {
				l = strings.TrimSpace(strings.TrimRight(l, "\r"))
				echo := !dev.Echo && sent != "" && strings.HasSuffix(l, sent)
				if l != "" && !echo {
					return literal(l)
				}
			}
		}
		if dev.Prompt.Regex {
			return mapping(yaml.FlowStyle, scalar("regex"), scalar(dev.Prompt.Text.Raw))
		}
		return scalar(dev.Prompt.Text.Raw)
	}
	lines := strings.Split(string(data), "\n")
	for _, l := range lines[:len(lines)-1] { // only finished lines
		l = strings.TrimSpace(strings.TrimRight(l, "\r"))
		if l == "" || l == sent || strings.HasSuffix(l, sent) && sent != "" || strings.ContainsAny(l[len(l)-1:], ">#$") {
			continue
		}
		return literal(l)
	}
	return nil
}

// lookup reads the session's variables, for the prompt's references.
func (s *Session) lookup(name string) (any, bool) {
	v, ok := s.vars[name]
	return v, ok
}

// literal is a pattern node that matches text as printed: a ${ in it is
// not a variable reference.
func literal(text string) *yaml.Node {
	return scalar(strings.ReplaceAll(text, "${", "$${"))
}

// expectedNext reports whether the user's next passed step on the same
// device is a standalone expect, which then reads the reply itself.
func (s *Session) expectedNext(i int) bool {
	e := s.history[i]
	for _, n := range s.history[i+1:] {
		if n.status != runner.Passed || n.dev != e.dev {
			continue
		}
		return hasKey(n.node, "expect") && !hasAnyKey(n.node, []string{"send", "send_hex", "send_ctrl"})
	}
	return false
}
