// Reset sequences: named DTR/RTS sequences that reset a board through its
// auto-reset circuit, and Console.ResetSequence, which runs one.

package serialx

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// ResetStep is one step of a reset sequence: set Lines (DTR first, then
// RTS, each line a separate ioctl), then wait Hold.
type ResetStep struct {
	Lines Lines
	Hold  time.Duration
}

// ResetSequence is a named DTR/RTS sequence that resets a board through
// the auto-reset circuit between its USB-serial adapter and the chip.
type ResetSequence struct {
	Name string
	// Description says in one line what the sequence does to which
	// circuit.
	Description string
	Steps       []ResetStep
}

// ResetSequences returns the sequences Console.ResetSequence knows, sorted
// by name; the result is the caller's to keep or change.
//
// The ESP32 sequences assume the classic auto-reset circuit of ESP32
// development boards: two cross-coupled transistors between the
// adapter's DTR and RTS and the chip's EN (reset, active low) and GPIO0
// (boot mode, low = ROM serial bootloader). EN is pulled low only while
// RTS is asserted and DTR is not; GPIO0 only while DTR is asserted and RTS
// is not. With both lines at the same level, both pins are released, which
// is why opening a port (both asserted) does not reset such a board. The
// capacitor on EN delays its rise by milliseconds, so the moment between
// the DTR and the RTS ioctl of one step, when both lines are briefly at
// the same level, does not matter.
//
// The arduino sequence assumes the auto-reset of Arduino-style boards: the
// adapter's DTR (on some boards RTS) reaches the microcontroller's RESET
// through a 100 nF capacitor, against a pull-up. Asserting the line drives
// its pin low, and the capacitor passes that edge on as a reset pulse of
// about a millisecond; holding a line negated, or asserted, does nothing.
func ResetSequences() []ResetSequence {
	const ms = time.Millisecond
	return []ResetSequence{
		{
			Name:        "arduino",
			Description: "reset an Arduino-style board into its bootloader: DTR and RTS off 250 ms, then on (the edge resets it through the auto-reset capacitor) 50 ms",
			Steps: []ResetStep{
				// Both pins high: the capacitor settles, so that the
				// edge that follows is a full reset pulse even if the
				// lines were just asserted.
				{Lines: Lines{DTR: new(false), RTS: new(false)}, Hold: 250 * ms},
				// Both pins low: the falling edge resets the board; the
				// hold lets the reset finish and the bootloader start
				// listening before anything is written.
				{Lines: Lines{DTR: new(true), RTS: new(true)}, Hold: 50 * ms},
			},
		},
		{
			Name:        "esp32",
			Description: "enter the ESP32 ROM serial bootloader (classic auto-reset: EN by RTS, GPIO0 by DTR): hold in reset 100 ms, release with GPIO0 low 50 ms, release GPIO0",
			Steps: []ResetStep{
				// EN low: the chip is held in reset; GPIO0 released.
				{Lines: Lines{DTR: new(false), RTS: new(true)}, Hold: 100 * ms},
				// EN released while GPIO0 is low: the ROM samples GPIO0
				// as EN rises and starts its serial bootloader.
				{Lines: Lines{DTR: new(true), RTS: new(false)}, Hold: 50 * ms},
				// GPIO0 released; the bootloader keeps running.
				{Lines: Lines{DTR: new(false)}},
			},
		},
		{
			Name:        "esp32_run",
			Description: "hard-reset an ESP32 into its application (classic auto-reset: EN by RTS, GPIO0 by DTR): hold in reset 100 ms with GPIO0 released, release",
			Steps: []ResetStep{
				// EN low with GPIO0 released: held in reset.
				{Lines: Lines{DTR: new(false), RTS: new(true)}, Hold: 100 * ms},
				// EN released with GPIO0 high: the chip boots from flash.
				{Lines: Lines{RTS: new(false)}},
			},
		},
	}
}

// LookupResetSequence returns the known reset sequence called name, or an
// error that lists the known names.
func LookupResetSequence(name string) (ResetSequence, error) {
	all := ResetSequences()
	var names []string
	for _, s := range all {
		if s.Name == name {
			return s, nil
		}
		names = append(names, s.Name)
	}
	return ResetSequence{}, fmt.Errorf("unknown reset sequence %q (known: %s)", name, strings.Join(names, ", "))
}

// ResetSequence runs the reset sequence called name (see ResetSequences,
// LookupResetSequence): each step sets its lines, DTR first, then holds
// them for at least its Hold, as PulseLines does. The timeline records
// "reset_sequence" with the name as it starts and "lines" after each step,
// so it shows exactly when the board was reset. The lines stay as the last
// step leaves them.
//
// When ctx ends or the console closes during a hold, or a step fails, the
// sequence stops and the lines it changed are set back to their levels
// before it began (a board is better left running than held in reset),
// and the error wraps ctx's error (or ErrClosed, or the step's). Waiting
// for the port and errors are as for SetLines; an unknown name is an error
// that lists the known ones.
func (c *Console) ResetSequence(ctx context.Context, name string) error {
	seq, err := LookupResetSequence(name)
	if err != nil {
		return fmt.Errorf("reset console %q: %w", c.name, err)
	}
	what := "run reset sequence " + name
	m, err := c.beginModem(ctx, what)
	if err != nil {
		return err
	}
	defer m.end()
	prev := m.levels()
	c.log.event(time.Now(), c.buf.End(), "reset_sequence", name)
	var touched Lines
	for i, st := range seq.Steps {
		if st.Lines.DTR != nil {
			touched.DTR = st.Lines.DTR
		}
		if st.Lines.RTS != nil {
			touched.RTS = st.Lines.RTS
		}
		if err = m.set(st.Lines); err != nil {
			break
		}
		if herr := m.hold(ctx, st.Hold); herr != nil {
			err = fmt.Errorf("%s on %s: stopped during the %s hold of step %d: %w", what, m.path, st.Hold, i+1, herr)
			break
		}
	}
	if err == nil {
		return nil
	}
	return m.failed(m.restore(err, prev.restoring(touched)))
}
