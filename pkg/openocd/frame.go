package openocd

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// How a request travels. OpenOCD's telnet server is a line editor made for
// people: it echoes every character, prints the result of a line followed
// by the prompt "\r> ", and writes log messages (its own, and those of
// every command that runs) into the same stream, erasing and redrawing the
// prompt around the ones that arrive while it is idle. A prompt can appear
// inside a log message and a result can contain anything, so hilrun does
// not look for prompts. It runs each command through a Tcl procedure that
// prints one self-delimiting frame:
//
//	STX seq SP code SP length ETX output EOT seq
//
// seq is the request's sequence number, so a frame from an earlier request
// (one that timed out) is recognised and skipped; code is what Tcl's catch
// returned (0 ok, 1 a Tcl error, 2 return, OpenOCD's negative error number
// for its own commands); length is the output's length in bytes, so the
// output may hold any byte, STX and EOT included. The server turns each
// "\n" of the output into "\r\n" on the way; the decoder turns them back.
// Everything outside frames is the noise of a terminal: option
// negotiation, the banner, echoes, prompts, NULs, backspaces, and the log
// lines hilrun reports.
//
// The procedure, defined when a connection opens, keeps request lines
// short: the server echoes a line one character at a time, a write system
// call each, which costs more than anything else in a round trip.
const (
	stx = 0x02
	etx = 0x03
	eot = 0x04
)

// maxLine is the longest line OpenOCD 0.12's telnet server accepts (its
// buffer holds 2560 bytes with the terminating NUL). It rings the bell and
// drops every character beyond, then runs what it kept, so a longer line
// must never be sent.
const maxLine = 2559

// maxFrameOutput bounds the length a frame header may announce; a bigger
// number means the bytes are not a frame. read_memory's largest answer,
// 65536 64-bit values, is about 1.3 MB.
const maxFrameOutput = 64 << 20

// procDef defines the Tcl procedure that runs a request: _hilrun SEQ CMD
// runs CMD at the top level of OpenOCD's interpreter, as a line typed at
// the prompt would run, and prints its frame. The server prints a result
// only up to its first NUL byte, so the output's NULs become the two
// characters \0.
const procDef = `proc _hilrun {n c} {set r [catch {uplevel #0 $c} o]; set o [string map {\x00 \\0} $o]; return "\x02$n $r [string bytelength $o]\x03$o\x04$n"}`

// requestFormat is a request line; the verbs are the sequence number and
// the command, quoted.
const requestFormat = `_hilrun %d "%s"`

// echoSeq recognises the echo of a request (or of the handshake, which
// defines _hilrun and then calls it) and finds its sequence number.
var echoSeq = regexp.MustCompile(`(?:^|[ ;>])_hilrun ([0-9]+) `)

// encodeRequest returns the line (without its newline) that runs cmd as
// request seq.
func encodeRequest(seq uint64, cmd string) (string, error) {
	q, err := tclQuote(cmd)
	if err != nil {
		return "", err
	}
	line := fmt.Sprintf(requestFormat, seq, q)
	if len(line) > maxLine {
		return "", fmt.Errorf("command is too long for openocd's telnet server: %d bytes once framed, at most %d fit on its line", len(line), maxLine)
	}
	return line, nil
}

// handshake returns the line that opens a connection: it defines _hilrun
// and runs OpenOCD's version command as request seq.
func handshake(seq uint64) string {
	return fmt.Sprintf("%s; "+requestFormat, procDef, seq, "version")
}

// tclQuote returns s as the inside of a Tcl double-quoted word whose value
// is s, in the printable ASCII that is all the telnet server accepts:
// substitution characters are escaped, control characters (a newline
// between commands, say) become backslash escapes and other characters
// \uXXXX escapes.
func tclQuote(s string) (string, error) {
	if !utf8.ValidString(s) {
		return "", fmt.Errorf("command %q is not valid UTF-8", s)
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		switch {
		case r == '\\' || r == '$' || r == '[' || r == ']' || r == '"':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x7f:
			b.WriteRune(r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			return "", fmt.Errorf("command %q holds %U, which openocd's Tcl cannot take in an escape", s, r)
		}
	}
	return b.String(), nil
}

// tclWord returns s as one Tcl word, for a file name or another argument
// that may hold spaces or brackets, within a command that encodeRequest
// then quotes as a whole.
func tclWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '_' || r == '-' || r == ':' || r == '+' ||
			('0' <= r && r <= '9') || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z'))
	}) < 0 {
		return s
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '\\', '$', '[', ']', '"':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}

// reply is one decoded frame.
type reply struct {
	seq  uint64
	code int
	out  string
}

// noise is a line OpenOCD printed outside frames. echo is the sequence
// number of the request it echoes, 0 for a log line.
type noise struct {
	text string
	echo uint64
}

// Telnet commands (RFC 854) the decoder removes.
const (
	iacSE   = 240
	iacSB   = 250
	iacWILL = 251
	iacDONT = 254
	iac     = 255
)

// Telnet parser states.
const (
	tnData = iota
	tnIAC
	tnOption
	tnSub
	tnSubIAC
)

// decoder splits what the telnet server sends into frames and noise lines.
// It keeps bytes across feeds, so a frame may arrive in any number of
// pieces. It is not safe for concurrent use.
type decoder struct {
	tn    int      // telnet parser state
	buf   []byte   // data bytes not yet decoded
	term  termLine // the noise line being drawn
	lines []noise  // complete noise lines not yet taken
}

// feed adds bytes read from the server.
func (d *decoder) feed(p []byte) {
	for _, c := range p {
		switch d.tn {
		case tnData:
			if c == iac {
				d.tn = tnIAC
				continue
			}
			d.buf = append(d.buf, c)
		case tnIAC:
			switch {
			case c == iac: // an escaped 0xff data byte
				d.buf = append(d.buf, c)
				d.tn = tnData
			case c >= iacWILL && c <= iacDONT:
				d.tn = tnOption
			case c == iacSB:
				d.tn = tnSub
			case c >= iacSE: // a two-byte command: NOP, GA, ...
				d.tn = tnData
			default: // not a command: a stray IAC, and c is data
				d.buf = append(d.buf, c)
				d.tn = tnData
			}
		case tnOption:
			d.tn = tnData
		case tnSub:
			if c == iac {
				d.tn = tnSubIAC
			}
		case tnSubIAC:
			if c == iacSE {
				d.tn = tnData
			} else {
				d.tn = tnSub
			}
		}
	}
}

// next returns the next complete frame, moving the noise before it to the
// noise lines. ok is false when no complete frame has arrived yet.
func (d *decoder) next() (r reply, ok bool) {
	for {
		i := bytes.IndexByte(d.buf, stx)
		if i < 0 {
			d.noise(d.buf)
			d.buf = d.buf[:0]
			d.shrink()
			return reply{}, false
		}
		d.noise(d.buf[:i])
		d.buf = d.buf[i:]
		r, n, st := parseFrame(d.buf)
		switch st {
		case frameIncomplete:
			return reply{}, false
		case frameInvalid:
			// Not a frame after all: the STX was noise.
			d.noise(d.buf[:1])
			d.buf = d.buf[1:]
			continue
		}
		d.buf = d.buf[n:]
		d.shrink()
		return r, true
	}
}

// shrink lets go of the buffer a large reply grew, once it is consumed.
func (d *decoder) shrink() {
	if len(d.buf) == 0 && cap(d.buf) > 1<<20 {
		d.buf = nil
	}
}

// takeLines returns the noise lines decoded so far and forgets them.
func (d *decoder) takeLines() []noise {
	l := d.lines
	d.lines = nil
	return l
}

// noise draws bytes outside frames as a terminal would and keeps the lines
// they complete.
func (d *decoder) noise(p []byte) {
	for _, c := range p {
		s, done := d.term.put(c)
		if !done {
			continue
		}
		s = strings.TrimRight(s, " ")
		if m := echoSeq.FindStringSubmatch(s); m != nil {
			if seq, err := strconv.ParseUint(m[1], 10, 64); err == nil && seq > 0 {
				d.lines = append(d.lines, noise{text: s, echo: seq})
				continue
			}
		}
		s = strings.TrimPrefix(s, "> ")
		if strings.TrimSpace(s) == "" || s == ">" {
			continue
		}
		d.lines = append(d.lines, noise{text: s})
	}
}

// Outcomes of parseFrame.
const (
	frameOK = iota
	frameIncomplete
	frameInvalid
)

// parseFrame decodes the frame at the start of b, which starts with STX.
// It returns the frame and the number of bytes it took.
func parseFrame(b []byte) (r reply, n int, status int) {
	s := frameScanner{b: b, p: 1}
	seq, ok, complete := s.num(false)
	if st := outcome(ok && seq > 0, complete); st != frameOK {
		return r, 0, st
	}
	if st := outcome(s.sep(' ')); st != frameOK {
		return r, 0, st
	}
	code, ok, complete := s.num(true)
	if st := outcome(ok, complete); st != frameOK {
		return r, 0, st
	}
	if st := outcome(s.sep(' ')); st != frameOK {
		return r, 0, st
	}
	length, ok, complete := s.num(false)
	if st := outcome(ok && length >= 0 && length <= maxFrameOutput, complete); st != frameOK {
		return r, 0, st
	}
	if st := outcome(s.sep(etx)); st != frameOK {
		return r, 0, st
	}
	out, st := s.output(length)
	if st != frameOK {
		return r, 0, st
	}
	if st := outcome(s.sep(eot)); st != frameOK {
		return r, 0, st
	}
	tail, ok, complete := s.num(false)
	if st := outcome(ok && tail == seq, complete); st != frameOK {
		return r, 0, st
	}
	return reply{seq: uint64(seq), code: int(code), out: string(out)}, s.p, frameOK
}

// outcome is the outcome of parseFrame for a part of a frame: incomplete
// when b ended before the part did, else invalid when the part is not what
// a frame holds there.
func outcome(ok, complete bool) int {
	switch {
	case !complete:
		return frameIncomplete
	case !ok:
		return frameInvalid
	}
	return frameOK
}

// frameScanner reads the parts of a frame from b; p is the next byte.
type frameScanner struct {
	b []byte
	p int
}

// num reads a decimal number, with a '-' first when signed. complete is
// false when b ends before the number does; ok is false when it is not a
// number _hilrun writes.
func (s *frameScanner) num(signed bool) (v int64, ok bool, complete bool) {
	b := s.b
	start := s.p
	if signed && s.p < len(b) && b[s.p] == '-' {
		s.p++
	}
	for s.p < len(b) && b[s.p] >= '0' && b[s.p] <= '9' {
		s.p++
		if s.p-start > 19 {
			return 0, false, true
		}
	}
	if s.p == len(b) {
		return 0, false, false
	}
	digits := b[start:s.p]
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) > 1 && digits[0] == '0' {
		// _hilrun writes its numbers in canonical decimal: one with
		// a leading zero is not a frame of ours.
		return 0, false, true
	}
	v, err := strconv.ParseInt(string(b[start:s.p]), 10, 64)
	return v, err == nil, true
}

// sep takes the separator c.
func (s *frameScanner) sep(c byte) (ok, complete bool) {
	if s.p == len(s.b) {
		return false, false
	}
	if s.b[s.p] != c {
		return false, true
	}
	s.p++
	return true, true
}

// output reads the output: length bytes as Tcl had them, each "\n" sent as
// "\r\n".
func (s *frameScanner) output(length int64) ([]byte, int) {
	b := s.b
	// Until at least that many bytes and the trailer's two have arrived,
	// there is no need to look.
	if int64(len(b)-s.p) < length+2 {
		return nil, frameIncomplete
	}
	out := make([]byte, 0, length)
	for int64(len(out)) < length {
		if s.p == len(b) {
			return nil, frameIncomplete
		}
		c := b[s.p]
		if c == '\r' {
			if s.p+1 == len(b) {
				return nil, frameIncomplete
			}
			if b[s.p+1] == '\n' {
				c = '\n'
				s.p++
			}
		}
		out = append(out, c)
		s.p++
	}
	return out, frameOK
}

// termLine is one line of a terminal: it applies carriage returns and
// backspaces the way the telnet server's line editing expects a terminal
// to, so that a redrawn prompt or an erased echo leaves the text a person
// would see.
type termLine struct {
	b   []byte
	cur int
}

// put draws c. At a newline it returns the finished line.
func (t *termLine) put(c byte) (line string, done bool) {
	switch c {
	case '\n':
		s := string(t.b)
		t.b = t.b[:0]
		t.cur = 0
		return s, true
	case '\r':
		t.cur = 0
	case '\b':
		if t.cur > 0 {
			t.cur--
		}
	case 0, 0x07: // NUL after CR LF, the bell
	default:
		if t.cur < len(t.b) {
			t.b[t.cur] = c
		} else {
			t.b = append(t.b, c)
		}
		t.cur++
	}
	return "", false
}
