// The bus: which region an address falls in, bus faults, access widths and
// little-endian bytes.

package sim

import (
	"fmt"
)

type region int

const (
	regionNone region = iota
	regionFlash
	regionRAM
	regionGPIO
)

func regionOf(addr uint32) region {
	switch {
	case addr-FlashBase < FlashSize:
		return regionFlash
	case addr-RAMBase < RAMSize:
		return regionRAM
	case addr-GPIOBase < GPIOSize:
		return regionGPIO
	}
	return regionNone
}

// regionEnd returns the first address after r, as a 64-bit value so the end
// of the bus does not wrap.
func regionEnd(r region) uint64 {
	switch r {
	case regionFlash:
		return uint64(FlashBase) + uint64(FlashSize)
	case regionRAM:
		return uint64(RAMBase) + uint64(RAMSize)
	case regionGPIO:
		return uint64(GPIOBase) + uint64(GPIOSize)
	}
	return 0
}

// span returns the region holding all n bytes from addr, or a bus fault at
// the first address outside it.
func span(op string, addr uint32, n int) (region, error) {
	r := regionOf(addr)
	if r == regionNone {
		return r, fmt.Errorf("%s 0x%08x: %w", op, addr, ErrBusFault)
	}
	if end := regionEnd(r); uint64(addr)+uint64(n) > end {
		return r, fmt.Errorf("%s 0x%08x: %w", op, uint32(end), ErrBusFault)
	}
	return r, nil
}

// checkAccess rejects widths the bus does not have and misaligned addresses.
func checkAccess(op string, addr uint32, width int) error {
	switch width {
	case 8, 16, 32:
	default:
		return fmt.Errorf("%s 0x%08x: invalid width %d bits (want 8, 16 or 32)", op, addr, width)
	}
	if addr%uint32(width/8) != 0 {
		return fmt.Errorf("%s 0x%08x: misaligned %d-bit access: %w", op, addr, width, ErrBusFault)
	}
	return nil
}

func widthMask(width int) uint32 {
	if width >= 32 {
		return 0xffffffff
	}
	return 1<<uint(width) - 1
}

func overlaps(off, n, start, size uint32) bool {
	return off < start+size && start < off+n
}

func getLE(b []byte) uint32 {
	var v uint32
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | uint32(b[i])
	}
	return v
}

func putLE(b []byte, v uint32) {
	for i := range b {
		b[i] = byte(v >> (8 * i))
	}
}
