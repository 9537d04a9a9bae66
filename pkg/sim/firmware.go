// What the firmware and the GPIO port do behind the bus: the millisecond
// counter, the LED blink, and the GPIO registers.

package sim

import (
	"encoding/binary"
	"time"
)

// advance brings the time-driven state up to now: it stores the live
// counter value in RAM and applies the LED toggles that fell due. It must be
// called with m.mu held before any access, so every access sees the same
// state whichever path it takes.
func (m *Memory) advance(now time.Time) {
	elapsed := now.Sub(m.counterAt)
	if elapsed < 0 {
		elapsed = 0
	}
	counter := m.counterBase + uint32(elapsed/time.Millisecond)
	binary.LittleEndian.PutUint32(m.ram[CounterAddr-RAMBase:], counter)

	if m.blinking {
		k := now.Sub(m.blinkAt) / BlinkInterval
		if k > 0 {
			if k%2 == 1 {
				m.odr ^= 1 << LEDPin
			}
			m.blinkAt = m.blinkAt.Add(k * BlinkInterval)
		}
	}
}

// ramWritten reacts to a write of n bytes at RAM offset off: the firmware
// counts on from a written counter value and starts or stops blinking.
func (m *Memory) ramWritten(now time.Time, off, n uint32) {
	if overlaps(off, n, CounterAddr-RAMBase, 4) {
		m.counterBase = binary.LittleEndian.Uint32(m.ram[CounterAddr-RAMBase:])
		m.counterAt = now
	}
	if overlaps(off, n, BlinkAddr-RAMBase, 4) {
		on := binary.LittleEndian.Uint32(m.ram[BlinkAddr-RAMBase:]) != 0
		if on && !m.blinking {
			m.blinkAt = now
		}
		m.blinking = on
	}
}

// gpioRead returns the 32-bit register at block offset reg (a multiple of 4).
func (m *Memory) gpioRead(reg uint32) uint32 {
	switch reg {
	case GPIOMODER - GPIOBase:
		return m.moder
	case GPIOIDR - GPIOBase, GPIOODR - GPIOBase:
		return m.odr
	}
	return 0
}

// gpioWrite applies a width-bit write of v at block offset off. Narrow writes
// change only their byte lanes, as the bus's byte strobes would.
func (m *Memory) gpioWrite(off uint32, width int, v uint32) {
	shift := 8 * (off & 3)
	mask := widthMask(width) << shift
	val := (v << shift) & mask
	switch off &^ 3 {
	case GPIOMODER - GPIOBase:
		m.moder = m.moder&^mask | val
	case GPIOODR - GPIOBase:
		m.odr = (m.odr&^mask | val) & 0xffff
	case GPIOBSRR - GPIOBase:
		set := val & 0xffff
		reset := val >> 16
		m.odr = (m.odr&^reset | set) & 0xffff
	}
}
