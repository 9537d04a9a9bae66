package steps

import (
	"strings"

	"gopkg.in/yaml.v3"
)

// KindExec runs a host command: exec: [uhubctl, -a, cycle, -p, "2"], or
// one string for sh -c with shell: true; expect and save read its output.
// See Step.Exec.
const KindExec Kind = "exec"

func init() {
	registerKind(KindSpec{
		Kind:    KindExec,
		Keys:    []string{"exec"},
		Caps:    CapHostExec | CapDevice,
		Doc:     "run a host command",
		Note:    "device only with port:",
		Allowed: []string{"shell", "dir", "env", "timeout", "expect", "regex", "save", "exit_code", "port"},
		caps:    execCaps,
		decode: func(d *decoder, s *Step, key string, v *yaml.Node) bool {
			if s.Exec == nil {
				s.Exec = &ExecSpec{}
			}
			return d.execField(s.Exec, key, v)
		},
		finish: func(d *decoder, s *Step, _ stepKeys) {
			x := s.Exec
			if x.Shell && len(x.Command) != 1 {
				d.add(s.Pos, "with shell: true, exec is one string for sh -c")
			}
			if !x.Shell && len(x.Command) == 1 && strings.ContainsAny(x.Command[0].Raw, " |&;<>$`") && !strings.Contains(x.Command[0].Raw, "${") {
				d.add(s.Pos, "exec %q is one word with spaces or shell characters: write an argument vector like [%s], or add shell: true to run it with sh -c", x.Command[0].Raw, strings.Join(strings.Fields(x.Command[0].Raw), ", "))
			}
			if x.Dir == "" {
				x.Dir = d.relPath(".")
			}
			if len(s.Save) > 1 && len(s.Expect) == 0 {
				d.add(s.Pos, "without expect, save on an exec names one variable for the whole output")
			}
		},
		check: func(v *validator, s *Step) {
			if x := s.Exec; x != nil {
				v.sendable = true
				v.command(s.Pos, x.Command, x.Env, x.Port)
				v.sendable = false
			}
			v.expect(s)
		},
		title: func(s *Step) string {
			if s.Exec != nil {
				var parts []string
				for _, t := range s.Exec.Command {
					parts = append(parts, t.Raw)
				}
				return clip(strings.Join(parts, " "))
			}
			return string(KindExec)
		},
	})
}

// ExecSpec is a host command run as a step.
type ExecSpec struct {
	// Command is an argument vector; each element may hold ${var}. With
	// Shell it is one string run by sh -c.
	Command []*Template
	Shell   bool
	Dir     string
	Env     map[string]*Template
	// ExitCodes are the exit statuses that pass; empty means 0 only.
	ExitCodes []int
	// AnyExit passes whatever the command exits with.
	AnyExit bool
	// Port names the device whose console hilrun releases while the
	// command runs (a flasher or a terminal program that opens the port
	// itself), and takes back after; the command finds the port's path
	// in $HILRUN_PORT.
	Port string
}

// execCaps is what one exec step does: a port: it releases is a device.
func execCaps(s *Step) Cap {
	if s.Exec != nil && s.Exec.Port != "" {
		return CapHostExec | CapDevice
	}
	return CapHostExec
}

// execField reads the keys of an exec step that are its own; false for
// the common ones (timeout, expect, regex, save).
func (d *decoder) execField(x *ExecSpec, k string, v *yaml.Node) bool {
	switch k {
	case "exec":
		for _, s := range d.strings(v, "exec") {
			t, err := ParseTemplate(s)
			if err != nil {
				d.add(d.pos(v), "exec: %v", err)
				continue
			}
			x.Command = append(x.Command, &t)
		}
		switch {
		case len(x.Command) == 0 && (v.Kind == yaml.SequenceNode || v.Kind == yaml.ScalarNode && v.Tag != "!!null"):
			d.add(d.pos(v), "exec needs a command: an argument vector such as [uhubctl, -a, cycle, -p, \"2\"]")
		case len(x.Command) > 0 && strings.TrimSpace(x.Command[0].Raw) == "":
			d.add(d.pos(v), "exec: the program to run is empty")
		}
	case "shell":
		x.Shell, _ = d.boolean(v, "shell")
	case "dir":
		if s, ok := d.str(v, "dir"); ok {
			x.Dir = d.relPath(s)
		}
	case "env":
		x.Env = d.env(v)
	case "exit_code":
		x.ExitCodes, x.AnyExit = d.exitCodes(v)
	case "port":
		x.Port, _ = d.str(v, "port")
	default:
		return false
	}
	return true
}

// exitCodes reads exit_code: a number, a list of numbers, or any.
func (d *decoder) exitCodes(v *yaml.Node) ([]int, bool) {
	if v.Kind == yaml.ScalarNode && v.Tag == "!!str" && v.Value == "any" {
		return nil, true
	}
	nodes := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		nodes = v.Content
	}
	var out []int
	for _, n := range nodes {
		n = resolve(n)
		if n.Kind == yaml.ScalarNode && n.Tag == "!!int" {
			if c, ok := d.integer(n, "exit_code", 0, 255); ok {
				out = append(out, c)
			}
			continue
		}
		d.add(d.pos(n), "exit_code must be a number from 0 to 255, a list of them, or any; found %s", kindName(n))
	}
	if len(out) == 0 && v.Kind == yaml.SequenceNode {
		d.add(d.pos(v), "exit_code needs at least one number")
	}
	return out, false
}
