package gdbremote

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
)

// maxAccess bounds the bytes one ReadMemory or WriteMemory moves.
const maxAccess = 16 << 20

// ReadMemory reads count values of width bits (8, 16, 32 or 64) from addr,
// little-endian, with m packets split to fit the stub's packet size. The
// protocol has no access width: the stub chooses how it touches memory
// (QEMU copies bytes; OpenOCD's and pyOCD's stubs use word accesses for an
// aligned word). An address the target faults on gives a *TargetError.
func (s *Session) ReadMemory(ctx context.Context, addr uint64, width, count int) ([]uint64, error) {
	size, err := accessSize(addr, width, count)
	if err != nil {
		return nil, err
	}
	if size == 0 {
		return []uint64{}, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	what := fmt.Sprintf("reading %d bytes at 0x%x", size, addr)
	var b []byte
	err = s.stopped(ctx, what, func() error {
		var err error
		b, err = s.readBytes(addr, size, what)
		return err
	})
	if err != nil {
		return nil, err
	}
	return decodeValues(b, width), nil
}

// WriteMemory writes values of width bits (8, 16, 32 or 64) to addr,
// little-endian, with X packets where the stub takes them and M packets
// otherwise.
func (s *Session) WriteMemory(ctx context.Context, addr uint64, width int, values []uint64) error {
	size, err := accessSize(addr, width, len(values))
	if err != nil || size == 0 {
		return err
	}
	b := make([]byte, 0, size)
	for _, v := range values {
		if width < 64 && v>>width != 0 {
			return fmt.Errorf("write 0x%x: value does not fit in %d bits", v, width)
		}
		b = binary.LittleEndian.AppendUint64(b, v)[:len(b)+width/8]
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	what := fmt.Sprintf("writing %d bytes at 0x%x", size, addr)
	return s.stopped(ctx, what, func() error { return s.writeBytes(addr, b, what) })
}

func accessSize(addr uint64, width, count int) (int, error) {
	switch width {
	case 8, 16, 32, 64:
	default:
		return 0, fmt.Errorf("memory access width %d: want 8, 16, 32 or 64", width)
	}
	if count < 0 || count > maxAccess/(width/8) {
		return 0, fmt.Errorf("memory access of %d values of %d bits: want at most %d bytes", count, width, maxAccess)
	}
	size := count * width / 8
	if size > 0 && addr+uint64(size)-1 < addr {
		return 0, fmt.Errorf("memory access of %d bytes at 0x%x: runs past the end of the address space", size, addr)
	}
	return size, nil
}

func decodeValues(b []byte, width int) []uint64 {
	n := width / 8
	out := make([]uint64, len(b)/n)
	for i := range out {
		var w [8]byte
		copy(w[:], b[i*n:(i+1)*n])
		out[i] = binary.LittleEndian.Uint64(w[:])
	}
	return out
}

// readChunk is how many bytes one m packet asks for: the hex reply must
// fit the stub's packet size.
func (s *Session) readChunk() int { return max((s.pktSize-8)/2, 16) }

// readBytes reads size bytes at addr. A stub may return fewer bytes than
// asked (the rest of the range faulted): the next request then starts
// where the reply ended, and its error names that address.
func (s *Session) readBytes(addr uint64, size int, what string) ([]byte, error) {
	out := make([]byte, 0, size)
	req := make([]byte, 0, 40)
	for len(out) < size {
		at := addr + uint64(len(out))
		n := min(size-len(out), s.readChunk())
		req = append(req[:0], 'm')
		req = strconv.AppendUint(req, at, 16)
		req = append(req, ',')
		req = strconv.AppendUint(req, uint64(n), 16)
		p, err := s.exchange(req, false)
		if err != nil {
			return nil, err
		}
		if isErrorReply(p) || len(p) == 0 {
			reply := string(p)
			if reply == "" {
				reply = "empty reply"
			}
			if at != addr {
				reply = fmt.Sprintf("at 0x%x: %s", at, reply)
			}
			return nil, &TargetError{Op: what, Reply: reply}
		}
		if len(p)%2 != 0 || len(p)/2 > n {
			return nil, fmt.Errorf("the stub answered m with %d hex digits for %d bytes", len(p), n)
		}
		out = out[:len(out)+len(p)/2]
		if _, err := hex.Decode(out[len(out)-len(p)/2:], p); err != nil {
			return nil, fmt.Errorf("the stub answered m with %q, not hex", clip(p))
		}
	}
	return out, nil
}

// writeBytes writes b at addr, in X packets when the stub takes them.
func (s *Session) writeBytes(addr uint64, b []byte, what string) error {
	if s.xState == 0 {
		// An X packet of no bytes asks whether X works (the protocol's
		// own probe): an empty reply means the stub does not know it;
		// OK or an error means it does.
		p, err := s.exchange(fmt.Appendf(nil, "X%x,0:", addr), false)
		if err != nil {
			return err
		}
		s.xState = -1
		if len(p) != 0 {
			s.xState = 1
		}
	}
	req := make([]byte, 0, s.pktSize)
	for off := 0; off < len(b); {
		at := addr + uint64(off)
		req = req[:0]
		var n int
		if s.xState == 1 {
			req = fmt.Appendf(req, "X%x,", at)
			// Room for the count's digits; each byte takes 1 or 2.
			room := s.pktSize - len(req) - 10
			n = fitEscaped(b[off:], room)
			req = strconv.AppendUint(req, uint64(n), 16)
			req = append(req, ':')
			req = escapeBinary(req, b[off:off+n])
		} else {
			req = fmt.Appendf(req, "M%x,", at)
			n = min(len(b)-off, (s.pktSize-len(req)-10)/2)
			req = strconv.AppendUint(req, uint64(n), 16)
			req = append(req, ':')
			req = hex.AppendEncode(req, b[off:off+n])
		}
		p, err := s.exchange(req, false)
		if err != nil {
			return err
		}
		if string(p) != "OK" {
			reply := string(p)
			if reply == "" {
				reply = "empty reply"
			}
			if at != addr {
				reply = fmt.Sprintf("at 0x%x: %s", at, reply)
			}
			return &TargetError{Op: what, Reply: reply}
		}
		off += n
	}
	return nil
}

// fitEscaped returns how many bytes of b fit in room bytes once escaped,
// at least one.
func fitEscaped(b []byte, room int) int {
	used := 0
	for i, c := range b {
		w := 1
		if c == '$' || c == '#' || c == '}' || c == '*' {
			w = 2
		}
		if used+w > room && i > 0 {
			return i
		}
		used += w
	}
	return len(b)
}
