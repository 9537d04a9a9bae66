package steps

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// This file holds a bench's recovery ladder: health:, the check that the
// bench's board answers, and recover:, the steps to try in order when it
// does not, or when a sequence ended in a bench error.
//
//	health:
//	  - send: ""
//	    expect: "sim> "
//	    timeout: 2s
//	recover:
//	  - reset_sequence: esp32
//	  - power: cycle
//	  - group: reflash
//	    steps: [...]

// MaxRungs bounds the rungs of one recovery ladder.
const MaxRungs = 16

// Ladder is a bench's recovery ladder. Health and every rung are
// sequences of their own, built and validated when the bench loads, with
// the bench's devices, probes, cameras and power entries that their steps
// use: they bind to the bench and run as any sequence does, through the
// same binding and checks.
type Ladder struct {
	// Health is the health check; nil when the bench has none (then the
	// bench has no rungs either).
	Health *Sequence
	// Rungs are what to try, in order; each is followed by Health.
	Rungs []*Rung
	// Pos is where health: (else recover:) is written.
	Pos Pos
}

// Rung is one rung of a ladder: one step as written (a group for several),
// as a sequence.
type Rung struct {
	// Index counts the rungs from 1.
	Index int
	Seq   *Sequence
	Pos   Pos
}

// Step is the rung's step.
func (r *Rung) Step() *Step { return r.Seq.Steps[0] }

// String names the rung for people: "rung 2 (power cycle)".
func (r *Rung) String() string {
	return fmt.Sprintf("rung %d (%s)", r.Index, r.Label())
}

// Label names the rung in a report: its step's kind and title, "power
// cycle", "group reflash".
func (r *Rung) Label() string {
	s := r.Step()
	t := s.Title()
	if strings.HasPrefix(t, string(s.Kind)) {
		return t
	}
	return string(s.Kind) + " " + t
}

// ladderKeys are the keys that give a bench its ladder.
var ladderKeys = []string{"health", "recover"}

// ladder decodes health: and recover: among pairs into b's ladder, each
// part a sequence over b's devices, probes, cameras and power entries.
// It returns nil when pairs have neither.
func (d *decoder) ladder(pairs []pair, b *Bench) *Ladder {
	var health, rungs *yaml.Node
	for _, p := range pairs {
		switch p.key.Value {
		case "health":
			health = p.val
		case "recover":
			rungs = p.val
		}
	}
	if health == nil && rungs == nil {
		return nil
	}
	l := &Ladder{}
	if health != nil {
		l.Pos = d.pos(health)
		if list := d.ladderSteps(health, "health", "a list of steps that pass when the board answers, such as [{send: \"\", expect: \"$ \"}]"); list != nil {
			l.Health = d.ladderSequence(b, "health", list, d.pos(health))
		}
	}
	if rungs == nil {
		return l
	}
	if health == nil {
		l.Pos = d.pos(rungs)
		d.add(d.pos(rungs), "recover: needs a health: check, which says after each rung whether it worked, such as health: [{send: \"\", expect: \"$ \"}]")
	}
	list := d.ladderSteps(rungs, "recover", "a list of steps to try in order, such as [{reset_sequence: esp32}, {power: cycle}] (a group for a rung of several steps)")
	if len(list) > MaxRungs {
		d.add(d.pos(rungs), "recover: a ladder has at most %d rungs, found %d", MaxRungs, len(list))
		list = list[:MaxRungs]
	}
	for i, s := range list {
		name := fmt.Sprintf("rung %d", i+1)
		l.Rungs = append(l.Rungs, &Rung{Index: i + 1, Seq: d.ladderSequence(b, name, []*Step{s}, s.Pos), Pos: s.Pos})
	}
	return l
}

// ladderSteps decodes the non-empty step list of health: or recover:;
// want says what the list is, for the error.
func (d *decoder) ladderSteps(n *yaml.Node, key, want string) []*Step {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		found := kindName(n)
		if n.Kind == yaml.SequenceNode {
			found = "an empty list"
		}
		d.add(d.pos(n), "%s must be %s, found %s", key, want, found)
		return nil
	}
	return d.steps(n, key)
}

// ladderSequence makes the sequence name of a ladder, with list as its
// steps, over copies of b's devices, probes, cameras and power entries;
// it validates it as a sequence, and keeps of the devices, probes and
// cameras only those its steps use, so that it opens nothing else. The
// bench's secrets are its to send: it declares those its steps send, so
// that the run reads no other.
func (d *decoder) ladderSequence(b *Bench, name string, list []*Step, pos Pos) *Sequence {
	seq := &Sequence{File: d.file, Name: name, OnFailure: Stop, ExpectTimeout: DefaultExpectTimeout, Steps: list, Pos: pos, Power: map[string]*PowerEntry{}}
	for _, n := range benchNames(b.Devices) {
		dev := *b.Devices[n]
		seq.Devices = append(seq.Devices, &dev)
	}
	for _, n := range benchNames(b.Probes) {
		p := *b.Probes[n]
		seq.Probes = append(seq.Probes, &p)
	}
	for _, n := range benchNames(b.Cameras) {
		c := *b.Cameras[n]
		seq.Cameras = append(seq.Cameras, &c)
	}
	for n, e := range b.Power {
		seq.Power[n] = e
	}
	for _, n := range benchNames(b.Secrets) {
		seq.Secrets = append(seq.Secrets, &SecretName{Name: n, Pos: b.Secrets[n].Pos})
	}
	before := len(d.list)
	sent := validate(seq, LoadOptions{}, d.errs)
	seq.Secrets = slices.DeleteFunc(seq.Secrets, func(s *SecretName) bool { return !sent[s.Name] })
	if len(d.list) == before {
		if err := CheckPower(seq); err != nil {
			if el, ok := err.(ErrorList); ok {
				d.list = append(d.list, el...)
			}
		}
	}
	keepUsed(seq)
	return seq
}

// benchNames are the sorted names of a bench's map, so that a ladder's
// sequences list what they bind in one order.
func benchNames[V any](m map[string]V) []string {
	var names []string
	for n := range m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// keepUsed drops the devices and probes that no step of seq uses (a QEMU
// launch's console counts as used by its probe).
func keepUsed(seq *Sequence) {
	devs, probes := map[string]bool{}, map[string]bool{}
	Walk(seq, func(s *Step) {
		if k, ok := LookupKind(s.Kind); ok && k.On == OnDevice {
			devs[s.To] = true
		}
		if usesProbe(s) {
			probes[s.To] = true
		}
		if s.Exec != nil && s.Exec.Port != "" {
			devs[s.Exec.Port] = true
		}
		if s.Build != nil && s.Build.Port != "" {
			devs[s.Build.Port] = true
		}
	})
	seq.Probes = slices.DeleteFunc(seq.Probes, func(p *Probe) bool { return !probes[p.Name] })
	for _, p := range seq.Probes {
		if p.Launch != nil && p.Launch.QEMU != nil && p.Launch.QEMU.Console != "" {
			devs[p.Launch.QEMU.Console] = true
		}
	}
	seq.Devices = slices.DeleteFunc(seq.Devices, func(dev *Device) bool { return !devs[dev.Name] })
}
