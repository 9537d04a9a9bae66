package gdbremote

import (
	"errors"
	"fmt"
	"strconv"
)

// Framing of the GDB remote serial protocol: a packet is
// $DATA#CC, CC the modulo-256 sum of DATA's bytes in two hex digits.
// Inside DATA, '}' escapes the next byte (sent XOR 0x20) and X*N repeats
// X N-29 more times (run-length encoding, which stubs may use in replies).
// Outside packets a stub sends '+' and '-' acknowledgements (until no-ack
// mode) and '%' notifications, which hilrun has not asked for and skips.

// maxPacket bounds one packet as received, before and after decoding, so
// a stub that never sends '#' cannot make hilrun buffer without end.
const maxPacket = 1 << 18

// frame appends the packet $data#cc to dst. data must already be escaped
// where it holds binary bytes.
func frame(dst, data []byte) []byte {
	dst = append(dst, '$')
	dst = append(dst, data...)
	return appendChecksum(dst, checksum(data))
}

func appendChecksum(dst []byte, sum byte) []byte {
	const digits = "0123456789abcdef"
	return append(dst, '#', digits[sum>>4], digits[sum&15])
}

func checksum(data []byte) byte {
	var s byte
	for _, c := range data {
		s += c
	}
	return s
}

// escapeBinary appends b to dst with the bytes the protocol reserves
// ($, #, } and *) escaped, as the X packet's data must be.
func escapeBinary(dst, b []byte) []byte {
	for _, c := range b {
		if c == '$' || c == '#' || c == '}' || c == '*' {
			dst = append(dst, '}', c^0x20)
			continue
		}
		dst = append(dst, c)
	}
	return dst
}

// errBadChecksum is the decoder's verdict on a packet whose checksum does
// not match its data.
var errBadChecksum = errors.New("packet checksum mismatch")

// event is one thing a stub sent: an acknowledgement, or a packet.
type event struct {
	// kind is '+', '-', '$' (a packet) or '%' (a notification).
	kind byte
	// data is a packet's data, escapes and run-length encoding undone.
	data []byte
	// err is errBadChecksum for a packet that arrived damaged, or a
	// framing error.
	err error
}

// decoder turns the bytes a stub sends into events. It keeps at most
// maxPacket bytes of a packet being received; bytes outside packets that
// are not acknowledgements are counted as noise (a stub sends none; a
// server that is not a stub sends text).
type decoder struct {
	state   int
	kind    byte
	raw     []byte
	hi      byte
	noise   []byte // the first bytes outside packets, acks included, to say what a server sent
	nNoise  int    // bytes outside packets that are not acks
	pending []event
}

const (
	stIdle = iota
	stData
	stSum1
	stSum2
)

// maxNoiseKept is how much noise the decoder keeps to show in errors.
const maxNoiseKept = 256

// feed consumes b and appends the events it completes to d.pending.
func (d *decoder) feed(b []byte) {
	for _, c := range b {
		switch d.state {
		case stIdle:
			switch c {
			case '+', '-':
				d.pending = append(d.pending, event{kind: c})
				if len(d.noise) < maxNoiseKept {
					d.noise = append(d.noise, c)
				}
			case '$', '%':
				d.state, d.kind, d.raw = stData, c, d.raw[:0]
			default:
				d.nNoise++
				if len(d.noise) < maxNoiseKept {
					d.noise = append(d.noise, c)
				}
			}
		case stData:
			switch {
			case c == '#':
				d.state = stSum1
			case c == '$':
				// A new packet before the old one ended: the old one is
				// lost (a stub restarted it, or a byte was dropped).
				d.pending = append(d.pending, event{kind: d.kind, err: errors.New("packet cut short by a new packet")})
				d.kind, d.raw = '$', d.raw[:0]
			case len(d.raw) >= maxPacket:
				d.pending = append(d.pending, event{kind: d.kind, err: fmt.Errorf("packet longer than %d bytes", maxPacket)})
				d.state = stIdle
			default:
				d.raw = append(d.raw, c)
			}
		case stSum1:
			d.hi = c
			d.state = stSum2
		case stSum2:
			d.state = stIdle
			want, err := strconv.ParseUint(string([]byte{d.hi, c}), 16, 8)
			if err != nil {
				d.pending = append(d.pending, event{kind: d.kind, err: fmt.Errorf("packet checksum %q is not two hex digits", []byte{d.hi, c})})
				continue
			}
			if byte(want) != checksum(d.raw) {
				d.pending = append(d.pending, event{kind: d.kind, err: errBadChecksum})
				continue
			}
			data, err := unescape(d.raw)
			d.pending = append(d.pending, event{kind: d.kind, data: data, err: err})
		}
	}
}

// next returns the oldest pending event.
func (d *decoder) next() (event, bool) {
	if len(d.pending) == 0 {
		return event{}, false
	}
	e := d.pending[0]
	d.pending = d.pending[1:]
	if len(d.pending) == 0 {
		d.pending = d.pending[:0:0]
	}
	return e, true
}

// unescape undoes '}' escapes and run-length encoding in a packet's data.
// The result is a new slice, at most maxPacket bytes.
func unescape(raw []byte) ([]byte, error) {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch c {
		case '}':
			if i+1 >= len(raw) {
				return nil, errors.New("packet ends inside an escape")
			}
			i++
			out = append(out, raw[i]^0x20)
		case '*':
			if len(out) == 0 || i+1 >= len(raw) {
				return nil, errors.New("run-length encoding without a character to repeat")
			}
			i++
			n := int(raw[i]) - 29
			if n < 0 || raw[i] > 126 {
				return nil, fmt.Errorf("run-length count %q out of range", raw[i])
			}
			if len(out)+n > maxPacket {
				return nil, fmt.Errorf("packet longer than %d bytes once expanded", maxPacket)
			}
			last := out[len(out)-1]
			for range n {
				out = append(out, last)
			}
		default:
			out = append(out, c)
		}
	}
	return out, nil
}

// isStopReply reports whether a packet is a stop reply: the target
// stopped (T, S), exited (W) or was killed (X).
func isStopReply(p []byte) bool {
	if len(p) < 3 {
		return false
	}
	switch p[0] {
	case 'T', 'S', 'W', 'X':
		return isHex(p[1]) && isHex(p[2])
	}
	return false
}

// isErrorReply reports whether a packet is an error reply: Enn, or
// E.text as newer stubs may send.
func isErrorReply(p []byte) bool {
	return len(p) == 3 && p[0] == 'E' && isHex(p[1]) && isHex(p[2]) || len(p) > 2 && p[0] == 'E' && p[1] == '.'
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
