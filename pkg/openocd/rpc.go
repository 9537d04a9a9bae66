package openocd

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// How a request travels over OpenOCD's Tcl RPC server. The server reads
// bytes up to SUB (0x1a), runs them as Tcl and answers with the result
// followed by SUB; it echoes nothing and says nothing about errors: a
// failed command's result is its error message. So, as over telnet, hilrun
// runs each command through a procedure, _hilrun_rpc SEQ CMD, which runs
// CMD at the top level of OpenOCD's interpreter under catch, inside
// OpenOCD's capture command, which collects the messages CMD logs (they do
// not reach a Tcl RPC client otherwise), and returns one frame:
//
//	STX seq SP code SP loglen SP outlen ETX log output EOT seq SUB
//
// seq and code are as over telnet; loglen and outlen are the lengths in
// bytes of the captured log and of the output, which follow each other,
// so either may hold any byte, SUB included. Nothing is translated on the
// way, NUL bytes included. Where OpenOCD lacks capture (releases before
// 0.11), the log is empty.
const (
	sub = 0x1a
)

// maxRPCRequest is the longest request hilrun sends to the Tcl RPC
// server. OpenOCD 0.12 takes up to 4 MiB and answers a longer one with an
// error message lacking its SUB, which would leave the client waiting.
const maxRPCRequest = 1 << 20

// rpcCommandBudget is the longest memory command (which needs no
// quoting) sent over the Tcl RPC server.
const rpcCommandBudget = 256 << 10

// maxRPCMessage bounds an unframed message of the Tcl RPC server, such as
// a target notification after "tcl_notifications on"; more bytes without
// a SUB mean the server is not OpenOCD's.
const maxRPCMessage = 64 << 10

// rpcProcDef defines _hilrun_rpc, with capture where OpenOCD has it.
const rpcProcDef = `if {[llength [info commands capture]]} {` +
	`proc _hilrun_rpc {n c} {set l [capture {set r [catch {uplevel #0 $c} o]; list}]; return "\x02$n $r [string bytelength $l] [string bytelength $o]\x03$l$o\x04$n"}` +
	`} else {` +
	`proc _hilrun_rpc {n c} {set r [catch {uplevel #0 $c} o]; return "\x02$n $r 0 [string bytelength $o]\x03$o\x04$n"}` +
	`}`

// rpcRequestFormat is a request; the verbs are the sequence number and the
// command, quoted.
const rpcRequestFormat = `_hilrun_rpc %d "%s"`

// encodeRPC returns the request (without its SUB) that runs cmd as
// request seq.
func encodeRPC(seq uint64, cmd string) (string, error) {
	q, err := rpcQuote(cmd)
	if err != nil {
		return "", err
	}
	req := fmt.Sprintf(rpcRequestFormat, seq, q)
	if len(req) > maxRPCRequest {
		return "", fmt.Errorf("command is too long for openocd's tcl server: %d bytes once framed, at most %d are sent", len(req), maxRPCRequest)
	}
	return req, nil
}

// rpcHandshake returns the request that opens a connection: it defines
// _hilrun_rpc and runs OpenOCD's version command as request seq.
func rpcHandshake(seq uint64) string {
	return fmt.Sprintf("%s; "+rpcRequestFormat, rpcProcDef, seq, "version")
}

// rpcQuote returns s as the inside of a Tcl double-quoted word whose value
// is s. The Tcl RPC server takes any byte but NUL (which ends its line) and
// SUB (which ends the request): substitution characters are escaped,
// control characters become backslash escapes, and other UTF-8 passes as
// it is.
func rpcQuote(s string) (string, error) {
	if !utf8.ValidString(s) {
		return "", fmt.Errorf("command %q is not valid UTF-8", s)
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' || c == '$' || c == '[' || c == ']' || c == '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\r':
			b.WriteString(`\r`)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// rpcReply is one decoded frame of the Tcl RPC server.
type rpcReply struct {
	seq  uint64
	code int
	log  string
	out  string
}

// rpcDecoder splits what the Tcl RPC server sends into replies. It keeps
// bytes across feeds, so a reply may arrive in any number of pieces. It is
// not safe for concurrent use.
type rpcDecoder struct {
	buf []byte
}

func (d *rpcDecoder) feed(p []byte) { d.buf = append(d.buf, p...) }

// next returns the next complete reply (ok), or a message that the
// server sent outside frames, such as a target notification (msg, ok).
// It returns an error when the bytes cannot be what OpenOCD's Tcl RPC
// server sends; the decoder is then of no further use.
func (d *rpcDecoder) next() (r rpcReply, msg string, ok bool, err error) {
	if len(d.buf) == 0 {
		return r, "", false, nil
	}
	if d.buf[0] != stx {
		i := bytes.IndexByte(d.buf, sub)
		if i < 0 {
			if len(d.buf) > maxRPCMessage {
				return r, "", false, fmt.Errorf("%d bytes arrived that are neither a reply nor a message ended by 0x1a (starting %q)", len(d.buf), abbreviate(string(d.buf)))
			}
			return r, "", false, nil
		}
		msg = strings.TrimRight(string(d.buf[:i]), "\r\n")
		d.consume(i + 1)
		return r, msg, true, nil
	}
	r, n, st := parseRPCFrame(d.buf)
	switch st {
	case frameIncomplete:
		return r, "", false, nil
	case frameInvalid:
		return r, "", false, fmt.Errorf("a reply hilrun cannot read (not a frame of hilrun's, or one of more than %d MiB): %q", maxFrameOutput>>20, abbreviate(string(d.buf)))
	}
	d.consume(n)
	return r, "", true, nil
}

func (d *rpcDecoder) consume(n int) {
	d.buf = d.buf[n:]
	if len(d.buf) == 0 {
		// Let go of the buffer a large reply grew.
		if cap(d.buf) > 1<<20 {
			d.buf = nil
		} else {
			d.buf = d.buf[:0:0]
		}
	}
}

// parseRPCFrame decodes the frame at the start of b, which starts with
// STX, and its SUB. It returns the frame and the number of bytes it took.
func parseRPCFrame(b []byte) (r rpcReply, n int, status int) {
	p := 1
	// num reads a decimal number in canonical form, as Tcl formats one.
	num := func(signed bool) (v int64, status int) {
		start := p
		if signed && p < len(b) && b[p] == '-' {
			p++
		}
		digits := p
		for p < len(b) && b[p] >= '0' && b[p] <= '9' {
			p++
			if p-start > 19 {
				return 0, frameInvalid
			}
		}
		if p == len(b) {
			return 0, frameIncomplete
		}
		if p == digits || p-digits > 1 && b[digits] == '0' {
			return 0, frameInvalid
		}
		v, err := strconv.ParseInt(string(b[start:p]), 10, 64)
		if err != nil {
			return 0, frameInvalid
		}
		return v, frameOK
	}
	sep := func(c byte) int {
		if p == len(b) {
			return frameIncomplete
		}
		if b[p] != c {
			return frameInvalid
		}
		p++
		return frameOK
	}
	var fields [4]int64
	for i, signed := range []bool{false, true, false, false} {
		v, st := num(signed)
		if st != frameOK {
			return r, 0, st
		}
		fields[i] = v
		end := byte(' ')
		if i == len(fields)-1 {
			end = etx
		}
		if st := sep(end); st != frameOK {
			return r, 0, st
		}
	}
	seq, code, loglen, outlen := fields[0], fields[1], fields[2], fields[3]
	if seq <= 0 || loglen > maxFrameOutput || outlen > maxFrameOutput {
		return r, 0, frameInvalid
	}
	if int64(len(b)-p) < loglen+outlen {
		return r, 0, frameIncomplete
	}
	r.log = string(b[p : p+int(loglen)])
	p += int(loglen)
	r.out = string(b[p : p+int(outlen)])
	p += int(outlen)
	if st := sep(eot); st != frameOK {
		return rpcReply{}, 0, st
	}
	tail, st := num(false)
	if st != frameOK {
		return rpcReply{}, 0, st
	}
	if tail != seq {
		return rpcReply{}, 0, frameInvalid
	}
	if st := sep(sub); st != frameOK {
		return rpcReply{}, 0, st
	}
	r.seq, r.code = uint64(seq), int(code)
	return r, p, frameOK
}

// logLines splits what capture collected into the lines a Reply's Log
// holds, as the telnet server would have shown them.
func logLines(log string) []string {
	var lines []string
	for l := range strings.Lines(log) {
		l = strings.TrimRight(l, "\r\n ")
		if strings.TrimSpace(l) == "" {
			continue
		}
		lines = append(lines, l)
	}
	return lines
}
