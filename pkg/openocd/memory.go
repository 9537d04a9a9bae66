package openocd

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// maxReadCount is the most values read_memory reads in one command.
const maxReadCount = 65536

// commandBudget is the longest command (before quoting, which memory
// commands do not need) that fits on a telnet line once framed.
var commandBudget = maxLine - len(fmt.Sprintf(requestFormat, uint64(math.MaxUint64), ""))

// budget is the longest memory command the session sends.
func (s *Session) budget() int {
	if s.tr == TclRPC {
		return rpcCommandBudget
	}
	return commandBudget
}

// ReadMemory reads count values of width bits (8, 16, 32 or 64) from addr
// on, with OpenOCD's read_memory, or its md commands where the target or
// OpenOCD lacks read_memory. A bus fault is a *CommandError.
//
// On a target whose bus has no 64-bit accesses (a 32-bit core such as a
// Cortex-M, where OpenOCD refuses width 64), a 64-bit value is read as two
// 32-bit words, low word first: the two halves are separate bus accesses,
// and the value is little-endian.
func (s *Session) ReadMemory(ctx context.Context, addr uint64, width, count int) ([]uint64, error) {
	if err := checkAccess(addr, width, count); err != nil {
		return nil, fmt.Errorf("read memory at 0x%x: %w", addr, err)
	}
	if err := s.acquire(ctx); err != nil {
		return nil, err
	}
	defer s.release()

	if width == 64 && !s.split64 {
		vals, err := s.readWords(ctx, addr, 64, count)
		if err == nil {
			return vals, nil
		}
		var ce *CommandError
		if !errors.As(err, &ce) {
			return nil, err
		}
		halves, err32 := s.readWords(ctx, addr, 32, 2*count)
		if err32 != nil {
			// A fault at width 32 too: the address, not the width.
			return nil, err
		}
		s.split64 = true
		return join64(halves), nil
	}
	if width == 64 {
		halves, err := s.readWords(ctx, addr, 32, 2*count)
		if err != nil {
			return nil, err
		}
		return join64(halves), nil
	}
	return s.readWords(ctx, addr, width, count)
}

// join64 pairs 32-bit words, low word first, into 64-bit values.
func join64(halves []uint64) []uint64 {
	out := make([]uint64, len(halves)/2)
	for i := range out {
		out[i] = halves[2*i] | halves[2*i+1]<<32
	}
	return out
}

// split64 is the inverse of join64.
func split64(values []uint64) []uint64 {
	out := make([]uint64, 0, 2*len(values))
	for _, v := range values {
		out = append(out, v&0xffffffff, v>>32)
	}
	return out
}

// readWords reads count values of width bits in chunks OpenOCD takes;
// the caller holds the session.
func (s *Session) readWords(ctx context.Context, addr uint64, width, count int) ([]uint64, error) {
	vals := make([]uint64, 0, count)
	for count > 0 {
		n := min(count, maxReadCount)
		v, err := s.readChunk(ctx, addr, width, n)
		if err != nil {
			return nil, err
		}
		vals = append(vals, v...)
		count -= n
		addr += uint64(n * width / 8)
	}
	return vals, nil
}

func (s *Session) readChunk(ctx context.Context, addr uint64, width, count int) ([]uint64, error) {
	if !s.noReadMemory {
		cmd := fmt.Sprintf("read_memory 0x%x %d %d", addr, width, count)
		r, err := s.runSafe(ctx, cmd)
		if err == nil {
			vals, err := parseList(r.Result, count)
			if err != nil {
				return nil, fmt.Errorf("openocd: %s: %w", cmd, err)
			}
			return vals, nil
		}
		if !lacks(err, "read_memory") {
			return nil, err
		}
		s.noReadMemory = true
	}
	cmd := fmt.Sprintf("%s 0x%x %d", mdName(width), addr, count)
	r, err := s.runSafe(ctx, cmd)
	if err != nil {
		return nil, err
	}
	vals, err := parseMD(r.Result, width, count)
	if err != nil {
		return nil, fmt.Errorf("openocd: %s: %w", cmd, err)
	}
	return vals, nil
}

// WriteMemory writes values of width bits (8, 16, 32 or 64) from addr on,
// with OpenOCD's write_memory, or its mw commands where the target or
// OpenOCD lacks write_memory. Many values take several commands; a
// failure leaves the ones before it written.
func (s *Session) WriteMemory(ctx context.Context, addr uint64, width int, values []uint64) error {
	if err := checkAccess(addr, width, len(values)); err != nil {
		return fmt.Errorf("write memory at 0x%x: %w", addr, err)
	}
	if width < 64 {
		for i, v := range values {
			if v>>width != 0 {
				return fmt.Errorf("write memory at 0x%x: value %d (0x%x) does not fit in %d bits", addr+uint64(i*width/8), i, v, width)
			}
		}
	}
	if err := s.acquire(ctx); err != nil {
		return err
	}
	defer s.release()

	if width == 64 && !s.split64 {
		// The first chunk tells whether the target takes 64-bit
		// accesses; a refused one wrote nothing.
		n, err := s.writeChunk(ctx, addr, 64, values)
		if err == nil {
			return s.writeWords(ctx, addr+uint64(n*8), 64, values[n:])
		}
		var ce *CommandError
		if !errors.As(err, &ce) {
			return err
		}
		// Try the first value as two 32-bit words: a fault there too
		// is about the address, not the width.
		if err32 := s.writeWords(ctx, addr, 32, split64(values[:1])); err32 != nil {
			return err
		}
		s.split64 = true
		addr, values = addr+8, values[1:]
	}
	if width == 64 {
		return s.writeWords(ctx, addr, 32, split64(values))
	}
	return s.writeWords(ctx, addr, width, values)
}

// writeWords writes values of width bits in chunks OpenOCD takes; the
// caller holds the session.
func (s *Session) writeWords(ctx context.Context, addr uint64, width int, values []uint64) error {
	for len(values) > 0 {
		n, err := s.writeChunk(ctx, addr, width, values)
		if err != nil {
			return err
		}
		values = values[n:]
		addr += uint64(n * width / 8)
	}
	return nil
}

// writeChunk writes as many of values as one command line holds and
// returns how many it wrote.
func (s *Session) writeChunk(ctx context.Context, addr uint64, width int, values []uint64) (int, error) {
	if !s.noWriteMemory {
		var b strings.Builder
		fmt.Fprintf(&b, "write_memory 0x%x %d {", addr, width)
		n := 0
		for n < len(values) && n < maxReadCount {
			v := fmt.Sprintf("0x%x", values[n])
			if b.Len()+len(v)+2 > s.budget() {
				break
			}
			if n > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(v)
			n++
		}
		b.WriteByte('}')
		_, err := s.run(ctx, b.String())
		if err == nil {
			return n, nil
		}
		if !lacks(err, "write_memory") {
			return 0, err
		}
		s.noWriteMemory = true
	}
	// One mw command per value, as many on the line as fit.
	var b strings.Builder
	name := mwName(width)
	n := 0
	for n < len(values) {
		c := fmt.Sprintf("%s 0x%x 0x%x", name, addr+uint64(n*width/8), values[n])
		if n > 0 && b.Len()+len(c)+2 > s.budget() {
			break
		}
		if n > 0 {
			b.WriteString("; ")
		}
		b.WriteString(c)
		n++
	}
	if _, err := s.run(ctx, b.String()); err != nil {
		return 0, err
	}
	return n, nil
}

// Halt halts the target.
func (s *Session) Halt(ctx context.Context) error {
	_, err := s.Command(ctx, "halt")
	return err
}

// Resume resumes the target where it halted.
func (s *Session) Resume(ctx context.Context) error {
	_, err := s.Command(ctx, "resume")
	return err
}

// Reset resets the target. mode is what the target does after: "run" (or
// ""), "halt", or "init" (halt and run the board's reset-init scripts).
func (s *Session) Reset(ctx context.Context, mode string) error {
	switch mode {
	case "":
		mode = "run"
	case "run", "halt", "init":
	default:
		return fmt.Errorf("reset: mode %q: must be run, halt or init", mode)
	}
	_, err := s.Command(ctx, "reset "+mode)
	return err
}

// checkAccess checks the arguments of a memory access.
func checkAccess(addr uint64, width, count int) error {
	switch width {
	case 8, 16, 32, 64:
	default:
		return fmt.Errorf("width %d: must be 8, 16, 32 or 64 bits", width)
	}
	if count < 1 {
		return fmt.Errorf("count %d: must be at least 1", count)
	}
	hi, lo := bits.Mul64(uint64(count), uint64(width/8))
	if _, carry := bits.Add64(addr, lo, 0); hi != 0 || carry != 0 {
		return fmt.Errorf("%d values of %d bits run past the end of the address space", count, width)
	}
	return nil
}

// lacks reports whether err is OpenOCD saying that it or the target has
// no command named name.
func lacks(err error, name string) bool {
	var ce *CommandError
	if !errors.As(err, &ce) {
		return false
	}
	return strings.Contains(ce.Output, `invalid command name "`+name+`"`) ||
		strings.Contains(ce.Output, "doesn't support "+name)
}

// parseList parses read_memory's result: a Tcl list of count numbers.
func parseList(s string, count int) ([]uint64, error) {
	f := strings.Fields(s)
	if len(f) != count {
		return nil, fmt.Errorf("asked for %d values, got %d in %q", count, len(f), abbreviate(s))
	}
	vals := make([]uint64, len(f))
	for i, t := range f {
		v, err := strconv.ParseUint(t, 0, 64)
		if err != nil {
			return nil, fmt.Errorf("value %d: %q is not a number", i, t)
		}
		vals[i] = v
	}
	return vals, nil
}

// parseMD parses what mdb, mdh, mdw or mdd print: lines of an address, a
// colon and hexadecimal values.
func parseMD(s string, width, count int) ([]uint64, error) {
	vals := make([]uint64, 0, count)
	for line := range strings.Lines(s) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		_, rest, ok := strings.Cut(line, ": ")
		if !ok {
			return nil, fmt.Errorf("unexpected line %q", abbreviate(line))
		}
		for _, t := range strings.Fields(rest) {
			if len(t) != width/4 {
				return nil, fmt.Errorf("%q is not a %d-bit value in line %q", t, width, abbreviate(line))
			}
			v, err := strconv.ParseUint(t, 16, 64)
			if err != nil {
				return nil, fmt.Errorf("%q is not a hexadecimal value in line %q", t, abbreviate(line))
			}
			vals = append(vals, v)
		}
	}
	if len(vals) != count {
		return nil, fmt.Errorf("asked for %d values, got %d", count, len(vals))
	}
	return vals, nil
}

func mdName(width int) string { return "md" + unitLetter(width) }
func mwName(width int) string { return "mw" + unitLetter(width) }

func unitLetter(width int) string {
	switch width {
	case 8:
		return "b"
	case 16:
		return "h"
	case 64:
		return "d"
	}
	return "w"
}

// abbreviate shortens s for an error message.
func abbreviate(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}
