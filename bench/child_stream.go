// The child sides of scenarios (b) and (d), which have the board stream
// its test data, and the tail of that data as each side expects it.

package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/hilrun/hilrun/pkg/sim"
	"github.com/hilrun/hilrun/pkg/steps"
	"github.com/hilrun/hilrun/pkg/stream"
	"golang.org/x/sys/unix"
)

// streamTail returns what the board prints last in reply to `stream size`:
// the last (possibly partial) data line, the line ending and the prompt.
// It is unique in the reply because every data line carries its number.
func streamTail(size int64) []byte {
	start := (max(size, 1) - 1) / sim.StreamLineLen * sim.StreamLineLen
	r := sim.NewStreamReader(size, "crlf")
	if _, err := io.CopyN(io.Discard, r, start); err != nil {
		panic(fmt.Sprintf("stream tail: %v", err)) // a StreamReader has all size bytes
	}
	last, _ := io.ReadAll(r)
	return append(last, "\r\n"+prompt...)
}

// streamRegexp returns a regular expression for the same tail: the line
// number, then [A-Z]+ for the letters. Line ends are written as \r and \n
// so that the expression reads the same to Go and to Python.
func streamRegexp(size int64) string {
	tail := string(streamTail(size))
	const numLen = 9 // "%08d "
	letters := 0
	for numLen+letters < len(tail) && tail[numLen+letters] >= 'A' && tail[numLen+letters] <= 'Z' {
		letters++
	}
	if len(tail) < numLen || letters == 0 {
		return escapeLineEnds(regexp.QuoteMeta(tail))
	}
	return escapeLineEnds(regexp.QuoteMeta(tail[:numLen])) + "[A-Z]+" +
		escapeLineEnds(regexp.QuoteMeta(tail[numLen+letters:]))
}

// escapeLineEnds writes CR and LF as \r and \n, which Go's and Python's
// regular expressions both read as those bytes.
func escapeLineEnds(s string) string {
	return strings.NewReplacer("\r", `\r`, "\n", `\n`).Replace(s)
}

// escapeLiteral escapes backslash, CR and LF in a literal, for a pexpect
// script, which decodes it with Python's unicode_escape.
func escapeLiteral(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\r", `\r`, "\n", `\n`).Replace(s)
}

// search asks the board for size bytes and waits for the tail: with the
// runner (how "runner", a sequence with one send/expect step), a serialx
// console (how "console") or plain reads with no matching at all (how
// "raw", the ceiling the board and the pty allow). The runner and the
// console log to logDir when it is not "".
func search(ctx context.Context, port, how, match string, size int64, limit time.Duration, logDir string) (childOutput, error) {
	tail := streamTail(size)
	var pattern string
	regex := false
	switch match {
	case "literal":
		pattern = string(tail)
	case "regex":
		pattern, regex = streamRegexp(size), true
	default:
		return childOutput{}, fmt.Errorf("unknown -match %q (want literal or regex)", match)
	}
	cmd := "stream " + strconv.FormatInt(size, 10)
	switch how {
	case "runner":
		exp := quoteYAML(pattern)
		if regex {
			exp = "{regex: " + quoteYAML(pattern) + "}"
		}
		src := fmt.Sprintf(`name: search
steps:
%s  - send: %s
    expect: %s
    timeout: %s
`, syncSteps, quoteYAML(cmd), exp, limit)
		res, err := runSequence(ctx, src, port, logDir)
		if err != nil {
			return childOutput{}, err
		}
		s := stepsOf(res, steps.KindSend)[1]
		return childOutput{Done: true, Seconds: s.Duration.Seconds(), Bytes: size + int64(len("\r\n"+prompt))}, nil
	case "console":
		c, err := openSynced(ctx, port, logDir)
		if err != nil {
			return childOutput{}, err
		}
		defer c.Close()
		want := stream.Literal(pattern)
		if regex {
			if want, err = stream.Regexp(pattern); err != nil {
				return childOutput{}, err
			}
		}
		ectx, cancel := context.WithTimeout(ctx, limit)
		defer cancel()
		t0 := time.Now()
		cur, err := c.Write(ectx, []byte(cmd+"\n"))
		if err != nil {
			return childOutput{}, err
		}
		m, err := c.Expect(ectx, cur, []stream.Pattern{want}, nil)
		d := time.Since(t0)
		if err != nil {
			return childOutput{}, err
		}
		return childOutput{Done: true, Seconds: d.Seconds(), Bytes: m.End - cur}, nil
	case "raw":
		return rawRead(port, cmd, size+int64(len("\r\n"+prompt)), tail, limit, false)
	case "raw-select":
		return rawRead(port, cmd, size+int64(len("\r\n"+prompt)), tail, limit, true)
	}
	return childOutput{}, fmt.Errorf("unknown -how %q (want runner, console or raw)", how)
}

// rawRead sends cmd and reads want bytes with plain read calls, checking
// only that they end with tail.
//
// With sel, the reads after the command go as go.bug.st/serial's Read goes
// (and so serialx's reader): select(2) on the port and a pipe, then
// read(2), two system calls per chunk.
func rawRead(port, cmd string, want int64, tail []byte, limit time.Duration, sel bool) (childOutput, error) {
	f, err := os.OpenFile(port, os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return childOutput{}, err
	}
	defer f.Close()
	deadline := time.Now().Add(limit)
	f.SetReadDeadline(deadline)
	buf := make([]byte, 64<<10)
	var seen []byte
	if _, err := f.WriteString("echo sync\n"); err != nil {
		return childOutput{}, err
	}
	for !bytes.HasSuffix(seen, []byte(syncReply)) {
		n, err := f.Read(buf)
		if err != nil {
			return childOutput{}, fmt.Errorf("wait for the sync reply: %w", err)
		}
		seen = append(seen, buf[:n]...)
	}
	t0 := time.Now()
	if _, err := f.WriteString(cmd + "\n"); err != nil {
		return childOutput{}, err
	}
	var got int64
	last := make([]byte, 0, 2*len(tail)+len(buf))
	read := f.Read
	if sel {
		if read, err = selectReader(f); err != nil {
			return childOutput{}, err
		}
	}
	for got < want {
		n, err := read(buf)
		got += int64(n)
		last = append(last, buf[:n]...)
		if len(last) > len(tail) {
			last = append(last[:0], last[len(last)-len(tail):]...)
		}
		if err != nil {
			return childOutput{}, fmt.Errorf("read after %d of %d bytes: %w", got, want, err)
		}
	}
	d := time.Since(t0)
	if got != want || !bytes.Equal(last, tail) {
		return childOutput{}, fmt.Errorf("read %d bytes ending %q, want %d ending %q", got, last, want, tail)
	}
	return childOutput{Done: true, Seconds: d.Seconds(), Bytes: got}, nil
}

// streamLog streams chunk bytes at a time for dur, as a sequence that a
// user runs with --log-dir: a repeat {for: dur} whose step sends `stream
// chunk` and expects the tail. It reports where each reply began in the
// log so the parent can check the log byte for byte.
func streamLog(ctx context.Context, port string, chunk int64, dur time.Duration, logDir string) (childOutput, error) {
	if logDir == "" {
		return childOutput{}, fmt.Errorf("-logdir is required")
	}
	src := fmt.Sprintf(`name: lossless
steps:
%s  - repeat: {for: %s}
    steps:
      - send: %s
        expect: %s
        timeout: 2m
`, syncSteps, dur, quoteYAML("stream "+strconv.FormatInt(chunk, 10)), quoteYAML(string(streamTail(chunk))))
	res, err := runSequence(ctx, src, port, logDir)
	if err != nil {
		return childOutput{}, err
	}
	out := childOutput{Done: true, Log: res.Logs[steps.DefaultDevice]}
	for _, s := range stepsOf(res, steps.KindSend)[1:] {
		c, ok := s.Data["cursor"].(int64)
		if !ok {
			return childOutput{}, fmt.Errorf("step %s has no cursor", s.Path)
		}
		out.Cursors = append(out.Cursors, c)
	}
	out.Iterations = len(out.Cursors)
	if r := stepsOf(res, steps.KindRepeat); len(r) == 1 {
		out.Seconds = r[0].Duration.Seconds()
	}
	return out, nil
}
