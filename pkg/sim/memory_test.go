package sim

import (
	"bytes"
	"errors"
	"sync"
	"testing"
	"time"
)

// fakeClock drives a Memory's timed behaviour from the test.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// op is one step of a memory test: a write, a read with its expected
// value, or a clock advance.
type op struct {
	write   bool
	addr    uint32
	width   int
	value   uint32 // written, or expected from a read
	fault   bool   // the access must fail with ErrBusFault
	advance time.Duration
}

func w(addr uint32, width int, v uint32) op {
	return op{write: true, addr: addr, width: width, value: v}
}

func r(addr uint32, width int, v uint32) op {
	return op{addr: addr, width: width, value: v}
}

func wFault(addr uint32, width int) op {
	return op{write: true, addr: addr, width: width, fault: true}
}

func rFault(addr uint32, width int) op {
	return op{addr: addr, width: width, fault: true}
}

func wait(d time.Duration) op {
	return op{advance: d}
}

func TestMemoryAccesses(t *testing.T) {
	led := uint32(1) << LEDPin
	tests := []struct {
		name string
		ops  []op
	}{
		{"flash holds the vector table", []op{
			r(FlashBase, 32, initialSP), r(FlashBase+4, 32, resetHandler), r(FlashBase+8, 32, 0xffffffff),
		}},
		{"flash is writable", []op{w(FlashBase+0x100, 32, 0x12345678), r(FlashBase+0x100, 32, 0x12345678)}},
		{"last flash word", []op{w(FlashBase+FlashSize-4, 32, 7), r(FlashBase+FlashSize-4, 32, 7)}},
		{"ram is little-endian", []op{
			w(RAMBase+0x10, 32, 0x11223344),
			r(RAMBase+0x10, 8, 0x44), r(RAMBase+0x11, 8, 0x33), r(RAMBase+0x12, 8, 0x22), r(RAMBase+0x13, 8, 0x11),
			r(RAMBase+0x10, 16, 0x3344), r(RAMBase+0x12, 16, 0x1122),
		}},
		{"narrow writes change only their bytes", []op{
			w(RAMBase+0x20, 32, 0xffffffff), w(RAMBase+0x21, 8, 0), w(RAMBase+0x22, 16, 0xabcd),
			r(RAMBase+0x20, 32, 0xabcd00ff),
		}},
		{"bits above the width are ignored", []op{w(RAMBase+0x30, 8, 0x1ff), r(RAMBase+0x30, 32, 0xff)}},
		{"last ram word", []op{w(RAMBase+RAMSize-4, 32, 9), r(RAMBase+RAMSize-4, 32, 9)}},
		{"misaligned", []op{
			rFault(RAMBase+0x41, 16), rFault(RAMBase+0x42, 32), rFault(FlashBase+1, 32),
			wFault(RAMBase+0x43, 16), wFault(GPIOODR+2, 32),
		}},
		{"unmapped", []op{
			rFault(0, 32), rFault(FlashBase-4, 32), rFault(FlashBase+FlashSize, 32), rFault(RAMBase+RAMSize, 8),
			rFault(GPIOBase+GPIOSize, 32), rFault(0xfffffffc, 32),
			wFault(0x40000000, 32), wFault(RAMBase+RAMSize, 32),
		}},
		{"gpio power-on state", []op{
			r(GPIOMODER, 32, 0b01<<(2*LEDPin)), r(GPIOODR, 32, 0), r(GPIOIDR, 32, 0),
		}},
		{"odr has 16 bits", []op{w(GPIOODR, 32, 0xffffffff), r(GPIOODR, 32, 0xffff)}},
		{"idr reflects odr", []op{w(GPIOODR, 32, 0x1234), r(GPIOIDR, 32, 0x1234), r(GPIOIDR, 8, 0x34)}},
		{"idr ignores writes", []op{w(GPIOIDR, 32, 0xffff), r(GPIOIDR, 32, 0), r(GPIOODR, 32, 0)}},
		{"bsrr sets", []op{w(GPIOBSRR, 32, led|1), r(GPIOODR, 32, led|1)}},
		{"bsrr resets", []op{w(GPIOODR, 32, 0xff), w(GPIOBSRR, 32, led<<16), r(GPIOODR, 32, 0xff&^led)}},
		{"bsrr set wins over reset", []op{w(GPIOBSRR, 32, led|led<<16), r(GPIOODR, 32, led)}},
		{"bsrr reads as zero", []op{w(GPIOBSRR, 32, led), r(GPIOBSRR, 32, 0)}},
		{"bsrr high half-word resets", []op{w(GPIOODR, 32, led), w(GPIOBSRR+2, 16, led), r(GPIOODR, 32, 0)}},
		{"odr byte write", []op{w(GPIOODR, 32, 0xff00), w(GPIOODR, 8, led), r(GPIOODR, 32, 0xff00|led)}},
		{"moder is read-write", []op{w(GPIOMODER, 32, 0x5555), r(GPIOMODER, 32, 0x5555)}},
		{"gpio holes read zero and ignore writes", []op{
			w(GPIOBase+0x04, 32, 0xffffffff), r(GPIOBase+0x04, 32, 0), r(GPIOBase+0x3fc, 32, 0),
		}},
		{"counter counts milliseconds", []op{
			r(CounterAddr, 32, 0), wait(999 * time.Microsecond), r(CounterAddr, 32, 0),
			wait(time.Microsecond), r(CounterAddr, 32, 1), wait(1233 * time.Millisecond), r(CounterAddr, 32, 1234),
		}},
		{"counter continues from a written value", []op{
			wait(50 * time.Millisecond), w(CounterAddr, 32, 1000), r(CounterAddr, 32, 1000),
			wait(5 * time.Millisecond), r(CounterAddr, 32, 1005),
		}},
		{"counter byte write", []op{
			wait(0x1234 * time.Millisecond), w(CounterAddr+1, 8, 0xab), r(CounterAddr, 32, 0xab34),
			wait(2 * time.Millisecond), r(CounterAddr, 16, 0xab36),
		}},
		{"counter wraps", []op{w(CounterAddr, 32, 0xffffffff), wait(2 * time.Millisecond), r(CounterAddr, 32, 1)}},
		{"blink toggles the led every interval", []op{
			w(BlinkAddr, 32, 1), r(GPIOODR, 32, 0),
			wait(BlinkInterval - time.Millisecond), r(GPIOODR, 32, 0),
			wait(time.Millisecond), r(GPIOODR, 32, led),
			wait(BlinkInterval), r(GPIOODR, 32, 0),
			wait(3 * BlinkInterval), r(GPIOODR, 32, led),
		}},
		{"blink off freezes the led", []op{
			w(BlinkAddr, 32, 1), wait(BlinkInterval), w(BlinkAddr, 32, 0), r(GPIOODR, 32, led),
			wait(10 * BlinkInterval), r(GPIOODR, 32, led), r(BlinkAddr, 32, 0),
		}},
		{"blink keeps its phase across a second enable", []op{
			w(BlinkAddr, 32, 1), wait(BlinkInterval / 2), w(BlinkAddr, 32, 2),
			wait(BlinkInterval / 2), r(GPIOODR, 32, led),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newFakeClock()
			m := newMemoryClock(clock.now)
			for i, o := range tt.ops {
				switch {
				case o.advance != 0:
					clock.advance(o.advance)
				case o.write:
					err := m.Write(o.addr, o.width, o.value)
					checkFault(t, i, "Write", o, err)
				default:
					v, err := m.Read(o.addr, o.width)
					checkFault(t, i, "Read", o, err)
					if err == nil && v != o.value {
						t.Errorf("op %d: Read(%#08x, %d) = %#x, want %#x", i, o.addr, o.width, v, o.value)
					}
				}
			}
		})
	}
}

func checkFault(t *testing.T, i int, what string, o op, err error) {
	t.Helper()
	if o.fault {
		if !errors.Is(err, ErrBusFault) {
			t.Errorf("op %d: %s(%#08x, %d) = %v, want a bus fault", i, what, o.addr, o.width, err)
		}
		return
	}
	if err != nil {
		t.Errorf("op %d: %s(%#08x, %d): %v", i, what, o.addr, o.width, err)
	}
}

func TestMemoryErrors(t *testing.T) {
	m := NewMemory()
	tests := []struct {
		name      string
		err       error
		want      string
		wantFault bool
	}{
		{"unmapped read", read(m, 0x10000000, 32), "read 0x10000000: bus fault", true},
		{"unmapped write", m.Write(0x10000000, 8, 1), "write 0x10000000: bus fault", true},
		{"misaligned read", read(m, RAMBase+2, 32), "read 0x20000002: misaligned 32-bit access: bus fault", true},
		{"bad width", read(m, RAMBase, 24), "read 0x20000000: invalid width 24 bits (want 8, 16 or 32)", false},
		{"block past the end of ram", m.ReadBlock(RAMBase+RAMSize-2, make([]byte, 4)), "read 0x20010000: bus fault", true},
		{"block in unmapped space", m.WriteBlock(0x30000000, []byte{1}), "write 0x30000000: bus fault", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.err == nil || tt.err.Error() != tt.want {
				t.Fatalf("err = %v, want %q", tt.err, tt.want)
			}
			if errors.Is(tt.err, ErrBusFault) != tt.wantFault {
				t.Fatalf("errors.Is(%v, ErrBusFault) = %v, want %v", tt.err, !tt.wantFault, tt.wantFault)
			}
		})
	}
}

func read(m *Memory, addr uint32, width int) error {
	_, err := m.Read(addr, width)
	return err
}

func TestMemoryBlocks(t *testing.T) {
	image := []byte("hilrun firmware image\x00\x01\x02\xff")
	tests := []struct {
		name string
		addr uint32
	}{
		{"flash", FlashBase + 0x200},
		{"flash end", FlashBase + FlashSize - uint32(len(image))},
		{"ram", RAMBase + 0x1001},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewMemory()
			if err := m.WriteBlock(tt.addr, image); err != nil {
				t.Fatal(err)
			}
			got := make([]byte, len(image))
			if err := m.ReadBlock(tt.addr, got); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, image) {
				t.Fatalf("ReadBlock = %q, want %q", got, image)
			}
			// Word reads see the bytes the block wrote.
			v, err := m.Read(tt.addr&^3, 32)
			if err != nil {
				t.Fatal(err)
			}
			if want := blockWord(image, tt.addr); v != want {
				t.Errorf("Read(%#x) = %#x, want %#x", tt.addr&^3, v, want)
			}
			if n := len(m.Writes()); n != 0 {
				t.Errorf("block write logged %d writes, want none", n)
			}
		})
	}

	t.Run("a faulting block writes nothing", func(t *testing.T) {
		m := NewMemory()
		addr := RAMBase + RAMSize - 2
		if err := m.WriteBlock(addr, []byte{1, 2, 3, 4}); !errors.Is(err, ErrBusFault) {
			t.Fatalf("WriteBlock across the end of ram = %v, want a bus fault", err)
		}
		if v, _ := m.Read(addr, 16); v != 0 {
			t.Fatalf("ram at %#x = %#x after a faulting block write, want 0", addr, v)
		}
	})

	t.Run("blocks see and set the counter", func(t *testing.T) {
		clock := newFakeClock()
		m := newMemoryClock(clock.now)
		clock.advance(0x0102 * time.Millisecond)
		p := make([]byte, 8)
		if err := m.ReadBlock(CounterAddr, p); err != nil {
			t.Fatal(err)
		}
		if want := []byte{0x02, 0x01, 0, 0, 0, 0, 0, 0}; !bytes.Equal(p, want) {
			t.Fatalf("ReadBlock(counter) = % x, want % x", p, want)
		}
		if err := m.WriteBlock(CounterAddr, []byte{0x10, 0, 0, 0, 1, 0, 0, 0}); err != nil {
			t.Fatal(err)
		}
		clock.advance(BlinkInterval)
		if v, _ := m.Read(CounterAddr, 32); v != 0x10+uint32(BlinkInterval/time.Millisecond) {
			t.Errorf("counter = %#x after block write of 0x10 and %v", v, BlinkInterval)
		}
		if !m.LED() {
			t.Error("blink flag set by a block write did not toggle the LED")
		}
	})

	t.Run("gpio bytes", func(t *testing.T) {
		m := NewMemory()
		if err := m.WriteBlock(GPIOODR, []byte{0x20, 0x01}); err != nil {
			t.Fatal(err)
		}
		p := make([]byte, 4)
		if err := m.ReadBlock(GPIOIDR, p); err != nil {
			t.Fatal(err)
		}
		if want := []byte{0x20, 0x01, 0, 0}; !bytes.Equal(p, want) {
			t.Fatalf("ReadBlock(IDR) = % x, want % x", p, want)
		}
		if !m.LED() {
			t.Error("LED off after writing ODR bit 5 by block")
		}
	})
}

// blockWord is the little-endian word at addr&^3 after image was written at
// addr into erased flash or cleared RAM.
func blockWord(image []byte, addr uint32) uint32 {
	fill := byte(0)
	if addr < RAMBase {
		fill = 0xff
	}
	var v uint32
	for i := uint32(0); i < 4; i++ {
		b := fill
		a := addr&^3 + i
		if a >= addr && a-addr < uint32(len(image)) {
			b = image[a-addr]
		}
		v |= uint32(b) << (8 * i)
	}
	return v
}

func TestMemoryReset(t *testing.T) {
	clock := newFakeClock()
	m := newMemoryClock(clock.now)
	steps := []struct {
		addr  uint32
		width int
		v     uint32
	}{
		{FlashBase + 0x400, 32, 0xcafef00d},
		{RAMBase + 0x100, 32, 0x55aa55aa},
		{CounterAddr, 32, 777},
		{BlinkAddr, 32, 1},
		{GPIOODR, 32, 0xffff},
		{GPIOMODER, 32, 0xffffffff},
	}
	for _, s := range steps {
		if err := m.Write(s.addr, s.width, s.v); err != nil {
			t.Fatal(err)
		}
	}
	clock.advance(10 * time.Second)
	m.Reset()
	clock.advance(3 * time.Millisecond)

	want := []struct {
		name string
		addr uint32
		v    uint32
	}{
		{"flash keeps its contents", FlashBase + 0x400, 0xcafef00d},
		{"ram cleared", RAMBase + 0x100, 0},
		{"counter restarts", CounterAddr, 3},
		{"blink off", BlinkAddr, 0},
		{"led off", GPIOODR, 0},
		{"moder power-on", GPIOMODER, 0b01 << (2 * LEDPin)},
	}
	for _, tt := range want {
		t.Run(tt.name, func(t *testing.T) {
			v, err := m.Read(tt.addr, 32)
			if err != nil || v != tt.v {
				t.Fatalf("Read(%#x) = %#x, %v; want %#x", tt.addr, v, err, tt.v)
			}
		})
	}
	t.Run("write log kept", func(t *testing.T) {
		if n := len(m.Writes()); n != len(steps) {
			t.Fatalf("%d writes logged, want %d", n, len(steps))
		}
	})
	t.Run("blink stays off", func(t *testing.T) {
		clock.advance(3 * BlinkInterval)
		if m.LED() {
			t.Fatal("LED toggled after Reset turned blink off")
		}
	})
}

func TestMemoryWriteLog(t *testing.T) {
	clock := newFakeClock()
	m := newMemoryClock(clock.now)
	var hooked []WriteEvent
	remove := m.OnWrite(func(e WriteEvent) { hooked = append(hooked, e) })

	t0 := clock.now()
	m.Write(RAMBase+8, 32, 1)
	clock.advance(time.Millisecond)
	m.Write(GPIOBSRR, 16, 1<<LEDPin)
	m.Write(0x10000000, 32, 3) // faults: not logged
	clock.advance(time.Millisecond)
	m.Write(RAMBase+9, 8, 0x1ff)

	want := []WriteEvent{
		{At: t0, Addr: RAMBase + 8, Width: 32, Value: 1},
		{At: t0.Add(time.Millisecond), Addr: GPIOBSRR, Width: 16, Value: 1 << LEDPin},
		{At: t0.Add(2 * time.Millisecond), Addr: RAMBase + 9, Width: 8, Value: 0xff},
	}
	got := m.Writes()
	if len(got) != len(want) {
		t.Fatalf("Writes() = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("write %d = %+v, want %+v", i, got[i], want[i])
		}
		if i < len(hooked) && hooked[i] != want[i] {
			t.Errorf("hook call %d = %+v, want %+v", i, hooked[i], want[i])
		}
	}
	if len(hooked) != len(want) {
		t.Errorf("hook called %d times, want %d", len(hooked), len(want))
	}

	remove()
	remove()
	m.Write(RAMBase+8, 32, 2)
	if len(hooked) != len(want) {
		t.Errorf("removed hook called: %d calls", len(hooked))
	}
}

func TestMemoryWriteLogIsBounded(t *testing.T) {
	m := NewMemory()
	const extra = 5
	for i := range logLimit + extra {
		if err := m.Write(RAMBase+0x100, 32, uint32(i)); err != nil {
			t.Fatal(err)
		}
	}
	got := m.Writes()
	if len(got) != logLimit {
		t.Fatalf("%d writes kept, want %d", len(got), logLimit)
	}
	if got[0].Value != extra || got[len(got)-1].Value != logLimit+extra-1 {
		t.Fatalf("log holds values %d..%d, want the newest %d..%d",
			got[0].Value, got[len(got)-1].Value, extra, logLimit+extra-1)
	}
}

func TestMemoryCounterRunsOnRealTime(t *testing.T) {
	m := NewMemory()
	first, err := m.Read(CounterAddr, 32)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(ioTimeout)
	for {
		v, _ := m.Read(CounterAddr, 32)
		if v > first {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("counter stuck at %d", v)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestMemoryConcurrentUse(t *testing.T) {
	m := NewMemory()
	var wg sync.WaitGroup
	var mu sync.Mutex
	calls := 0
	defer m.OnWrite(func(WriteEvent) { mu.Lock(); calls++; mu.Unlock() })()

	const workers, each = 8, 500
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			addr := RAMBase + 0x200 + uint32(g)*4
			for i := range each {
				if err := m.Write(addr, 32, uint32(i)); err != nil {
					t.Error(err)
					return
				}
				if _, err := m.Read(addr, 32); err != nil {
					t.Error(err)
					return
				}
				m.Write(GPIOBSRR, 32, 1<<LEDPin)
				m.LED()
				m.ReadBlock(RAMBase, make([]byte, 16))
			}
		}()
	}
	wg.Wait()
	for g := range workers {
		if v, _ := m.Read(RAMBase+0x200+uint32(g)*4, 32); v != each-1 {
			t.Errorf("worker %d's word = %d, want %d", g, v, each-1)
		}
	}
	if calls != workers*each*2 {
		t.Errorf("hook called %d times, want %d", calls, workers*each*2)
	}
}

func TestRegions(t *testing.T) {
	m := NewMemory()
	for _, reg := range m.Regions() {
		t.Run(reg.Name, func(t *testing.T) {
			if _, err := m.Read(reg.Base, 32); err != nil {
				t.Errorf("first word: %v", err)
			}
			if _, err := m.Read(reg.Base+reg.Size-4, 32); err != nil {
				t.Errorf("last word: %v", err)
			}
			if _, err := m.Read(reg.Base+reg.Size, 32); !errors.Is(err, ErrBusFault) {
				t.Errorf("word after the region: %v, want a bus fault", err)
			}
			if _, err := m.Read(reg.Base-4, 32); !errors.Is(err, ErrBusFault) {
				t.Errorf("word before the region: %v, want a bus fault", err)
			}
		})
	}
	if n := len(m.Regions()); n != 3 {
		t.Errorf("%d regions, want flash, ram and gpio", n)
	}
}
