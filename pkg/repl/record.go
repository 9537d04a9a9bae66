package repl

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/hilrun/hilrun/pkg/runner"
)

// record writes the steps that ran so far as a sequence file, with the
// devices and probes as bound. With expects, a send that expected nothing
// gets the first line the device answered as its expect.
func (s *Session) record(path string, expects bool) error {
	devs := mapping(0)
	for _, d := range s.opts.Seq.Devices {
		m := mapping(yaml.FlowStyle)
		if s.opts.RecordPorts && d.Port != "" {
			m.Content = append(m.Content, scalar("port"), scalar(d.Port))
			if d.Baud != 0 {
				m.Content = append(m.Content, scalar("baud"), &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(d.Baud)})
			}
		}
		if d.LineEnding != "" {
			m.Content = append(m.Content, scalar("line_ending"), scalar(d.LineEnding))
		}
		devs.Content = append(devs.Content, scalar(d.Name), m)
	}
	doc := mapping(0, scalar("name"), scalar(strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))))
	doc.Content = append(doc.Content, scalar("devices"), devs)
	if len(s.opts.Seq.Probes) > 0 {
		probes := mapping(0)
		for _, p := range s.opts.Seq.Probes {
			m := mapping(yaml.FlowStyle)
			if s.opts.RecordPorts && p.GDB != "" {
				m.Content = append(m.Content, scalar("gdb"), scalar(p.GDB))
			}
			if s.opts.RecordPorts && p.OpenOCD != "" {
				m.Content = append(m.Content, scalar("openocd"), scalar(p.OpenOCD))
			}
			if p.ELF != "" {
				m.Content = append(m.Content, scalar("elf"), scalar(p.ELF))
			}
			probes.Content = append(probes.Content, scalar(p.Name), m)
		}
		doc.Content = append(doc.Content, scalar("probes"), probes)
	}
	list := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	for i, e := range s.history {
		if e.status != runner.Passed {
			continue
		}
		n := e.node
		if expects && e.cursor >= 0 && !hasKey(n, "expect") && !s.expectedNext(i) {
			if reply := s.reply(e); reply != "" {
				c := *n
				c.Content = append(append([]*yaml.Node(nil), n.Content...), scalar("expect"), scalar(reply))
				n = &c
			}
		}
		list.Content = append(list.Content, n)
	}
	if len(list.Content) == 0 {
		return fmt.Errorf("no step has passed yet")
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
	return os.WriteFile(path, b.Bytes(), 0o666)
}

// reply is the first line a device printed after a send that is neither
// the echo of what was sent nor blank nor a bare prompt (ending in >, # or $).
func (s *Session) reply(e entry) string {
	o := s.outputs[e.dev]
	if o == nil {
		return ""
	}
	sent := ""
	for i := 0; i+1 < len(e.node.Content); i += 2 {
		if e.node.Content[i].Value == "send" {
			sent = e.node.Content[i+1].Value
		}
	}
	data := o.since(e.cursor)
	lines := strings.Split(string(data), "\n")
	for _, l := range lines[:len(lines)-1] { // only finished lines
		l = strings.TrimSpace(strings.TrimRight(l, "\r"))
		if l == "" || l == sent || strings.HasSuffix(l, sent) && sent != "" || strings.ContainsAny(l[len(l)-1:], ">#$") {
			continue
		}
		return l
	}
	return ""
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
