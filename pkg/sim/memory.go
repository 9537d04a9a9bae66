package sim

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Memory map of the virtual board. Addresses are 32-bit bus addresses and
// sizes are in bytes.
const (
	// FlashBase is where the 128 KiB flash starts. The simulator lets bus
	// writes change flash so images can be loaded without a flash driver.
	FlashBase uint32 = 0x08000000
	// FlashSize is the size of flash in bytes.
	FlashSize uint32 = 128 << 10
	// RAMBase is where the 64 KiB RAM starts.
	RAMBase uint32 = 0x20000000
	// RAMSize is the size of RAM in bytes.
	RAMSize uint32 = 64 << 10
	// GPIOBase is where the GPIO port's register block starts, laid out like
	// an STM32 GPIO port.
	GPIOBase uint32 = 0x48000000
	// GPIOSize is the size of the GPIO register block in bytes. Offsets in
	// the block that hold no register read as 0 and ignore writes.
	GPIOSize uint32 = 0x400
)

// Firmware variables, at fixed addresses in RAM.
const (
	// CounterAddr holds a uint32 the firmware increments once per
	// millisecond since boot. A bus write sets the value it counts on from.
	CounterAddr uint32 = RAMBase
	// BlinkAddr holds a uint32 flag, 0 at boot. While it is non-zero the
	// firmware toggles the LED every BlinkInterval.
	BlinkAddr uint32 = RAMBase + 4
)

// GPIO registers.
const (
	// GPIOMODER is the pin mode register; the firmware sets the LED pin to
	// output (0b01) at boot.
	GPIOMODER uint32 = GPIOBase + 0x00
	// GPIOIDR is the input data register. It is read-only, reflects GPIOODR
	// (every pin is looped back) and ignores writes.
	GPIOIDR uint32 = GPIOBase + 0x10
	// GPIOODR is the output data register; only its low 16 bits exist.
	GPIOODR uint32 = GPIOBase + 0x14
	// GPIOBSRR is the write-only bit set/reset register: the low 16 bits
	// of a write set ODR bits, the high 16 bits reset them; a bit both set
	// and reset ends up set. It reads as 0.
	GPIOBSRR uint32 = GPIOBase + 0x18
)

// LEDPin is the GPIO pin (bit of GPIOODR) that drives the board's LED.
const LEDPin = 5

// BlinkInterval is the time between two LED toggles while the firmware's
// blink flag at BlinkAddr is non-zero.
const BlinkInterval = 500 * time.Millisecond

// logLimit bounds the write and receive logs: they keep the newest entries.
const logLimit = 100000

// Power-on contents of flash: an erased array holding a vector table with
// the initial stack pointer and the reset handler, as on a flashed part.
const (
	initialSP    = RAMBase + RAMSize
	resetHandler = FlashBase + 0x101
)

// ErrBusFault is the error a bus access to an unmapped or misaligned
// address returns, wrapped with the operation and the address.
var ErrBusFault = errors.New("bus fault")

// Region is one mapped range of the bus. Size is in bytes.
type Region struct {
	Name     string
	Base     uint32
	Size     uint32
	ReadOnly bool
}

// WriteEvent is one bus write the memory received. At is time.Now() when the
// write was applied (with its monotonic reading), Width is in bits and Value
// holds the written value in its low Width bits.
type WriteEvent struct {
	At    time.Time
	Addr  uint32
	Width int
	Value uint32
}

// Memory is the virtual board's memory map: flash, RAM with the firmware's
// variables, and a GPIO port. It is safe for concurrent use.
//
// The firmware's timed behaviour (the millisecond counter, the LED blink) is
// computed from elapsed time on each access rather than by a goroutine.
type Memory struct {
	now func() time.Time

	mu    sync.Mutex
	flash []byte
	ram   []byte
	moder uint32
	odr   uint32

	bootAt      time.Time
	counterBase uint32
	counterAt   time.Time
	blinking    bool
	blinkAt     time.Time // time of the last toggle, or of blink start

	writes ring[WriteEvent]
	hooks  hooks[WriteEvent]
	resets hooks[struct{}]
}

// NewMemory returns a memory map in its power-on state.
func NewMemory() *Memory {
	return newMemoryClock(time.Now)
}

// newMemoryClock returns a memory map whose timed behaviour follows now, so
// tests can drive the counter and the blink.
func newMemoryClock(now func() time.Time) *Memory {
	m := &Memory{
		now:    now,
		flash:  make([]byte, FlashSize),
		ram:    make([]byte, RAMSize),
		writes: ring[WriteEvent]{max: logLimit},
	}
	for i := range m.flash {
		m.flash[i] = 0xff
	}
	binary.LittleEndian.PutUint32(m.flash[0:], initialSP)
	binary.LittleEndian.PutUint32(m.flash[4:], resetHandler)
	m.Reset()
	return m
}

// Reset puts RAM and the GPIO port back to their power-on state: RAM cleared,
// the counter restarting from 0, blink off, the LED pin an output driven low.
// Flash is non-volatile and keeps its contents, as on a real board. The write
// log is a measurement, not board state, and is kept. The OnReset hooks
// run after it.
func (m *Memory) Reset() {
	m.reset()
	m.resets.call(struct{}{})
}

// OnReset registers fn to be called after each Reset, whichever path
// reset the board (a reboot, a debugger's reset, a power cycle). fn must
// not call Reset. The returned function unregisters fn.
func (m *Memory) OnReset(fn func()) (remove func()) {
	return m.resets.add(func(struct{}) { fn() })
}

func (m *Memory) reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	clear(m.ram)
	m.moder = 0b01 << (2 * LEDPin)
	m.odr = 0
	m.bootAt = now
	m.counterBase = 0
	m.counterAt = now
	m.blinking = false
	m.blinkAt = now
}

// Regions returns the mapped ranges of the bus, in address order.
func (m *Memory) Regions() []Region {
	return []Region{
		{Name: "flash", Base: FlashBase, Size: FlashSize},
		{Name: "ram", Base: RAMBase, Size: RAMSize},
		{Name: "gpio", Base: GPIOBase, Size: GPIOSize},
	}
}

// Read returns the width-bit value at addr, little-endian. width is 8, 16 or
// 32; addr must be a multiple of width/8. A misaligned or unmapped address
// returns an error wrapping ErrBusFault.
func (m *Memory) Read(addr uint32, width int) (uint32, error) {
	if err := checkAccess("read", addr, width); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.advance(m.now())
	n := uint32(width / 8)
	switch regionOf(addr) {
	case regionFlash:
		return getLE(m.flash[addr-FlashBase : addr-FlashBase+n]), nil
	case regionRAM:
		return getLE(m.ram[addr-RAMBase : addr-RAMBase+n]), nil
	case regionGPIO:
		off := addr - GPIOBase
		shift := 8 * (off & 3)
		return (m.gpioRead(off&^3) >> shift) & widthMask(width), nil
	}
	return 0, fmt.Errorf("read 0x%08x: %w", addr, ErrBusFault)
}

// Write stores the low width bits of v at addr, little-endian, and logs the
// write. width is 8, 16 or 32; addr must be a multiple of width/8. A
// misaligned or unmapped address returns an error wrapping ErrBusFault and is
// not logged. Bits of v above width are ignored.
func (m *Memory) Write(addr uint32, width int, v uint32) error {
	if err := checkAccess("write", addr, width); err != nil {
		return err
	}
	v &= widthMask(width)
	n := uint32(width / 8)
	m.mu.Lock()
	now := m.now()
	m.advance(now)
	switch regionOf(addr) {
	case regionFlash:
		putLE(m.flash[addr-FlashBase:addr-FlashBase+n], v)
	case regionRAM:
		off := addr - RAMBase
		putLE(m.ram[off:off+n], v)
		m.ramWritten(now, off, n)
	case regionGPIO:
		m.gpioWrite(addr-GPIOBase, width, v)
	default:
		m.mu.Unlock()
		return fmt.Errorf("write 0x%08x: %w", addr, ErrBusFault)
	}
	ev := WriteEvent{At: now, Addr: addr, Width: width, Value: v}
	m.writes.add(ev)
	m.mu.Unlock()
	m.hooks.call(ev)
	return nil
}

// ReadBlock fills p with the bytes starting at addr. The whole range must lie
// in one region; otherwise it returns an error wrapping ErrBusFault that
// names the first unmapped address, and p's contents are unspecified.
func (m *Memory) ReadBlock(addr uint32, p []byte) error {
	if len(p) == 0 {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r, err := span("read", addr, len(p))
	if err != nil {
		return err
	}
	m.advance(m.now())
	switch r {
	case regionFlash:
		copy(p, m.flash[addr-FlashBase:])
	case regionRAM:
		copy(p, m.ram[addr-RAMBase:])
	case regionGPIO:
		for i := range p {
			off := addr - GPIOBase + uint32(i)
			p[i] = byte(m.gpioRead(off&^3) >> (8 * (off & 3)))
		}
	}
	return nil
}

// WriteBlock stores p at addr byte by byte, the way a debugger loads an
// image. The whole range must lie in one region; otherwise it returns an error
// wrapping ErrBusFault that names the first unmapped address and writes
// nothing. Block writes are not recorded in Writes and do not call OnWrite
// hooks: those log individual bus accesses.
func (m *Memory) WriteBlock(addr uint32, p []byte) error {
	if len(p) == 0 {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r, err := span("write", addr, len(p))
	if err != nil {
		return err
	}
	now := m.now()
	m.advance(now)
	switch r {
	case regionFlash:
		copy(m.flash[addr-FlashBase:], p)
	case regionRAM:
		off := addr - RAMBase
		copy(m.ram[off:], p)
		m.ramWritten(now, off, uint32(len(p)))
	case regionGPIO:
		for i, c := range p {
			m.gpioWrite(addr-GPIOBase+uint32(i), 8, uint32(c))
		}
	}
	return nil
}

// Writes returns the newest bus writes (at most 100000), oldest first.
func (m *Memory) Writes() []WriteEvent {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.writes.snapshot()
}

// OnWrite registers fn to be called after each successful Write, on the
// writer's goroutine and without the memory's lock held. When several
// goroutines write at once, calls may arrive out of order; sort by At if
// order matters. The returned function unregisters fn; it may be called more
// than once.
func (m *Memory) OnWrite(fn func(WriteEvent)) (remove func()) {
	return m.hooks.add(fn)
}

// LED reports whether the LED pin is driven high.
func (m *Memory) LED() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.advance(m.now())
	return m.odr&(1<<LEDPin) != 0
}

// uptime returns the time since the last Reset.
func (m *Memory) uptime() time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.now().Sub(m.bootAt)
}
