// A hung firmware: after `hang` the board reads its consoles but neither
// echoes nor answers, on every console, until it is reset (a debugger's
// reset, SRST on the JTAG port: anything that resets its memory map) or
// power-cycled (Replug). Then it boots again and prints its banner.

package sim

import "bytes"

// Hung reports whether the board is hung by the hang command.
func (b *Board) Hung() bool { return b.hung.Load() }

// rebootIfHung is the memory map's reset hook: a reset ends a hang, and
// the firmware boots again on every console. A reset of a running board
// prints nothing: a debugger's resets of the memory map leave the consoles
// alone.
func (b *Board) rebootIfHung() {
	if !b.hung.CompareAndSwap(true, false) {
		return
	}
	live := b.live.Load()
	if live == nil {
		return
	}
	for _, s := range *live {
		s.notify(func(s *session, out *bytes.Buffer) { s.banner(out) })
	}
}
