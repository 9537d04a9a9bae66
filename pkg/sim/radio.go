// The radio link between the board's consoles: `tx TEXT` on one console
// arrives on every other as an unsolicited `rx TEXT` line, as a message
// between two boards over a radio would, and `hang`, which stops the
// firmware (hang.go).

package sim

import (
	"bytes"
	"slices"
	"strconv"
)

// linkHelp lists the commands of this file and hang.go for `help`.
var linkHelp = []string{
	"tx TEXT                  send TEXT over the radio: the other consoles print rx TEXT",
	"hang                     print hung, then stop answering until a reset or a power cycle",
}

func init() {
	// Before the last line, which says how to chain commands.
	n := len(commandHelp) - 1
	commandHelp = slices.Concat(commandHelp[:n:n], linkHelp, commandHelp[n:])
}

// runLink runs the commands of the radio link and of hang; it reports
// whether name was one of them.
func (s *session) runLink(name, rest string, out *bytes.Buffer) bool {
	switch name {
	case "tx":
		s.tx(rest, out)
	case "hang":
		// The line says the board has stopped, so that a test knows when
		// to reset it; nothing follows it.
		s.b.hung.Store(true)
		s.println(out, "hung")
	default:
		return false
	}
	return true
}

// tx sends text to every other console and says how many bytes left.
func (s *session) tx(text string, out *bytes.Buffer) {
	if text == "" {
		s.println(out, "usage: tx TEXT")
		return
	}
	s.b.transmit(s.idx, text)
	s.println(out, "tx: "+strconv.Itoa(len(text))+" bytes")
}

// transmit delivers text to every console but from, as rx TEXT. A hung
// board hears nothing.
func (b *Board) transmit(from int, text string) {
	live := b.live.Load()
	if live == nil || b.hung.Load() {
		return
	}
	for _, s := range *live {
		if s.idx == from {
			continue
		}
		s.notify(func(s *session, out *bytes.Buffer) {
			if !s.b.hung.Load() {
				s.println(out, "rx "+text)
			}
		})
	}
}
