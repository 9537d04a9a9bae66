package steps

import (
	"fmt"
	"time"

	"gopkg.in/yaml.v3"
)

// This file holds the power section of sequences and bench files: the
// commands that switch each board's power, which power steps run.

// PowerEntry names the host commands that switch one board's power. Each
// is an argument vector, or one string for sh -c with Shell.
type PowerEntry struct {
	Name  string
	On    []string
	Off   []string
	Cycle []string
	Shell bool
	// OffTime is how long a cycle without a cycle command leaves the
	// board off; 0 means 1s.
	OffTime time.Duration
	// Timeout bounds each command; 0 means 30s.
	Timeout time.Duration
	// Dir is where the commands run: the folder of the file that names
	// them, so ./relay.sh beside a bench file is found.
	Dir string
	Pos Pos
}

// powerEntryKeys are the keys of a power entry.
var powerEntryKeys = []string{"on", "off", "cycle", "shell", "off_time", "timeout"}

// power reads a power section: a board name to the commands that switch
// it.
func (d *decoder) power(n *yaml.Node) {
	if d.seq.Power == nil {
		d.seq.Power = map[string]*PowerEntry{}
	}
	d.namedEntries(n, "power", "board names to {on: [...], off: [...]}", "power entry", func(name string, p pair) {
		e := &PowerEntry{Name: name, Dir: d.relPath("."), Pos: d.pos(p.key)}
		if p.val.Kind != yaml.MappingNode {
			d.add(d.pos(p.val), "power %s must be a mapping such as {on: [uhubctl, -a, on, -p, \"2\"], off: [uhubctl, -a, off, -p, \"2\"]}, found %s", name, kindName(p.val))
			return
		}
		for _, f := range d.pairs(p.val) {
			switch f.key.Value {
			case "on":
				e.On = d.command(f.val, "on")
			case "off":
				e.Off = d.command(f.val, "off")
			case "cycle":
				e.Cycle = d.command(f.val, "cycle")
			case "shell":
				e.Shell, _ = d.boolean(f.val, "shell")
			case "off_time":
				e.OffTime, _ = d.durationIn(f.val, "off_time", delayRange)
			case "timeout":
				e.Timeout, _ = d.durationIn(f.val, "timeout", timeoutRange)
			default:
				d.unknownKey(f.key, "power "+name, powerEntryKeys)
			}
		}
		if e.Cycle == nil && (e.On == nil || e.Off == nil) {
			d.add(e.Pos, "power %s needs on: and off: commands (cycle: is optional; without it a cycle runs off, waits off_time, then on)", name)
		}
		for _, c := range [][]string{e.On, e.Off, e.Cycle} {
			if e.Shell && len(c) > 1 {
				d.add(e.Pos, "power %s: with shell: true each command is one string for sh -c", name)
				break
			}
		}
		d.seq.Power[name] = e
	})
}

// command reads one command of a power entry: an argument vector, or one
// string.
func (d *decoder) command(v *yaml.Node, what string) []string {
	c := d.strings(v, what)
	if len(c) == 0 {
		d.add(d.pos(v), "%s needs a command: an argument vector such as [uhubctl, -a, on, -p, \"2\"]", what)
	}
	return c
}

// PowerCommand returns the argument vector for one action of e: the
// command itself, or sh -c with it when Shell is set.
func (e *PowerEntry) PowerCommand(action string) []string {
	var c []string
	switch action {
	case "on":
		c = e.On
	case "off":
		c = e.Off
	case "cycle":
		c = e.Cycle
	}
	if c == nil {
		return nil
	}
	if e.Shell {
		return []string{"sh", "-c", c[0]}
	}
	return c
}

// OffTimeOrDefault is how long a cycle leaves the board off.
func (e *PowerEntry) OffTimeOrDefault() time.Duration {
	if e.OffTime > 0 {
		return e.OffTime
	}
	return time.Second
}

// String names the entry in messages: "power dut".
func (e *PowerEntry) String() string { return fmt.Sprintf("power %s", e.Name) }
