package runner

import (
	"fmt"
	"time"

	"github.com/hilrun/hilrun/pkg/steps"
)

// Events besides those of a run's ordinary course.
const (
	// SetupFailed comes when a device or probe did not open, before the
	// steps that therefore did not run: Result.Error is why, Console the
	// device that did not open ("" for a probe) and Data where its port
	// came from (steps.Device.PortFrom, "" for the sequence).
	SetupFailed EventType = "setup_failed"
	// ConsoleNotice tells what happened to a console's connection, in
	// Data as words for people: "disconnected: …", "reconnected on PATH".
	ConsoleNotice EventType = "console_notice"
)

// OpenError is why a device's console or a probe did not open before the
// first step. Exactly one of Device and Probe is set.
type OpenError struct {
	Device string
	Probe  string
	// Port is the path the device was bound to, and From where that came
	// from (steps.Device.PortFrom); both "" for a probe.
	Port, From string
	Err        error
}

func (e *OpenError) Error() string {
	if e.Probe != "" {
		return fmt.Sprintf("probe %s: %v", e.Probe, e.Err)
	}
	msg := fmt.Sprintf("device %s: %v", e.Device, e.Err)
	if e.From != "" {
		msg += " (the port is from " + e.From + ")"
	}
	return msg
}

func (e *OpenError) Unwrap() error { return e.Err }

// joinGroup is the group path of a group called name inside group.
func joinGroup(group, name string) string {
	switch {
	case name == "":
		return group
	case group == "":
		return name
	}
	return group + " / " + name
}

// notOpened records that the device or probe called name, and every one
// after it, did not open.
func (r *run) notOpened(name string) {
	r.closed = map[string]bool{name: true}
	for _, d := range r.seq.Devices {
		if r.consol[d.Name] == nil {
			r.closed[d.Name] = true
		}
	}
	for _, p := range r.seq.Probes {
		if r.probes[p.Name] == nil {
			r.closed[p.Name] = true
		}
	}
}

// unopened names the device or probe step s needs that did not open, or
// is "" when s can run.
func (r *run) unopened(s *steps.Step) string {
	if len(r.closed) == 0 {
		return ""
	}
	names := []string{s.To}
	if s.Exec != nil {
		names = append(names, s.Exec.Port)
	}
	if s.Build != nil {
		names = append(names, s.Build.Port)
	}
	for _, n := range names {
		if n == "" || !r.closed[n] {
			continue
		}
		if r.seq.Probe(n) != nil {
			return "probe " + n
		}
		return "device " + n
	}
	return ""
}

// setupFailed tells the sinks why no step will run, before the steps are
// listed as not run.
func (r *run) setupFailed(err error) {
	e := Event{Type: SetupFailed, Result: &SequenceResult{
		Name: r.seq.Name, File: r.seq.File, StartedAt: r.start, Status: r.res.Status, Error: err.Error(),
	}}
	if oe, ok := err.(*OpenError); ok {
		e.Console, e.Data = oe.Device, []byte(oe.From)
	}
	r.emit(e)
}

// shownTimeout is how long step s may wait, as the live line shows it: its own timeout, else the
// sequence's expect timeout for a step that expects, else a delay's
// length; 0 when it is not known.
func (r *run) shownTimeout(s *steps.Step) time.Duration {
	switch {
	case s.Timeout > 0:
		return s.Timeout
	case len(s.Expect) > 0:
		return r.seq.ExpectTimeout
	case s.Kind == steps.KindDelay:
		return s.Delay
	}
	return 0
}

// portFrom says where dev's port came from: the sequence or the bench
// file where it is declared, a flag, or a step's to:; "" when not known.
func portFrom(dev *steps.Device) string {
	if dev.PortFrom == "" && dev.Implicit && dev.Port != "" {
		return "the step at " + dev.Pos.String()
	}
	return dev.PortFrom
}

// connectionNotifier is a console that tells when its device disconnects
// and comes back; serialx.Console is one.
type connectionNotifier interface {
	OnConnection(fn func(at time.Time, event, detail string)) (remove func())
}

// watchConnection announces the disconnections and reconnections of
// console name to the sinks, as ConsoleNotice events.
func (r *run) watchConnection(name string, c Console) {
	for {
		if n, ok := c.(connectionNotifier); ok {
			remove := n.OnConnection(func(_ time.Time, event, detail string) {
				text := event
				switch event {
				case "reconnected":
					text = "reconnected on " + detail
				case "disconnected":
					text = "disconnected: " + detail
				}
				r.emit(Event{Type: ConsoleNotice, Console: name, Data: []byte(text)})
			})
			r.cleanup = append(r.cleanup, remove)
			return
		}
		u, ok := c.(interface{ Unwrap() Console })
		if !ok {
			return
		}
		c = u.Unwrap()
	}
}
