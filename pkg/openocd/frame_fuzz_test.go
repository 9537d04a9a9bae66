package openocd

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// The telnet framing's fuzz targets; their seed corpora are under
// testdata/fuzz/FuzzXxx (go test fuzz v1). Run one for a while with
//
//	go test -run '^$' -fuzz '^FuzzDecoder$' -fuzztime 1m ./pkg/openocd

// decoded is everything a decoder gave for a stream.
type decoded struct {
	frames []reply
	lines  []noise
	rest   []byte // bytes still waiting for the rest of a frame
}

// decodeStream feeds stream to a new decoder in the pieces cuts gives:
// each byte of cuts is the length of the next piece (0 means 1), and what
// is left after the last cut is the last piece. After each piece it takes
// every complete frame and line, as a session's reader does.
func decodeStream(stream, cuts []byte) decoded {
	var d decoder
	var out decoded
	take := func() {
		for {
			r, ok := d.next()
			if !ok {
				break
			}
			out.frames = append(out.frames, r)
		}
		out.lines = append(out.lines, d.takeLines()...)
	}
	for _, c := range cuts {
		if len(stream) == 0 {
			break
		}
		n := min(max(int(c), 1), len(stream))
		d.feed(stream[:n])
		stream = stream[n:]
		take()
	}
	if len(stream) > 0 {
		d.feed(stream)
		take()
	}
	out.rest = append([]byte(nil), d.buf...)
	return out
}

// addRecordings adds the recorded telnet sessions of pkg/sim/jtag as seeds.
func addRecordings(f *testing.F, add func(data []byte)) {
	files, _ := filepath.Glob(filepath.Join(jtagRecordings, "*.bin"))
	for _, file := range files {
		if b, err := os.ReadFile(file); err == nil {
			add(b)
		}
	}
}

// FuzzDecoder feeds an arbitrary byte stream to the decoder, split at
// arbitrary places. The decoder never panics, gives the same frames, noise
// lines and waiting bytes however the stream is split (the server's writes
// reach us in pieces the network chooses), every frame it gives is one
// the stream holds, and it keeps no more bytes than it was given.
func FuzzDecoder(f *testing.F) {
	addRecordings(f, func(b []byte) { f.Add(b, []byte{1, 7, 64}) })
	f.Fuzz(func(t *testing.T, stream, cuts []byte) {
		whole := decodeStream(stream, nil)
		split := decodeStream(stream, cuts)
		if !reflect.DeepEqual(whole.frames, split.frames) {
			t.Fatalf("frames depend on the split: whole %+v, split %+v", whole.frames, split.frames)
		}
		if !reflect.DeepEqual(whole.lines, split.lines) {
			t.Fatalf("noise lines depend on the split: whole %+v, split %+v", whole.lines, split.lines)
		}
		if !bytes.Equal(whole.rest, split.rest) {
			t.Fatalf("waiting bytes depend on the split: whole %q, split %q", whole.rest, split.rest)
		}
		if len(whole.rest) > len(stream) {
			t.Fatalf("decoder keeps %d bytes of a %d-byte stream", len(whole.rest), len(stream))
		}
		data := telnetData(stream)
		for _, r := range whole.frames {
			if r.seq == 0 {
				t.Fatalf("frame with sequence number 0: %+v", r)
			}
			if !bytes.Contains(data, []byte(fmt.Sprintf("\x02%d ", r.seq))) {
				t.Fatalf("frame %+v: the stream holds no frame header for its sequence number", r)
			}
			if len(r.out) > len(stream) {
				t.Fatalf("frame output of %d bytes from a %d-byte stream", len(r.out), len(stream))
			}
		}
		for _, l := range whole.lines {
			if bytes.ContainsAny([]byte(l.text), "\n") {
				t.Fatalf("noise line holds a newline: %q", l.text)
			}
		}
	})
}

// serverFrame returns the bytes OpenOCD's telnet server sends for a frame
// of request seq with Tcl result code and output out: _hilrun's format,
// each "\n" sent as "\r\n", each 0xff byte doubled as telnet requires, and
// the CR LF and prompt that follow a result.
func serverFrame(seq uint64, code int, out []byte) []byte {
	body := bytes.ReplaceAll(out, []byte("\n"), []byte("\r\n"))
	b := fmt.Appendf(nil, "\x02%d %d %d\x03", seq, code, len(out))
	b = append(b, body...)
	b = fmt.Appendf(b, "\x04%d\r\n\r> ", seq)
	return bytes.ReplaceAll(b, []byte{iac}, []byte{iac, iac})
}

// FuzzFrame hides one frame, as the server sends it, in arbitrary noise
// (any bytes but STX, which starts a frame, and telnet's IAC), split at
// arbitrary places. The decoder gives exactly that frame, whatever its
// output holds: STX, EOT, CR, LF, NUL, a prompt, another frame's text.
func FuzzFrame(f *testing.F) {
	f.Fuzz(func(t *testing.T, before, out, after []byte, seq uint64, code int32, cuts []byte) {
		if seq == 0 || seq > 1<<63-1 {
			return // not a sequence number a session sends
		}
		stream := append(append(noiseBytes(before), serverFrame(seq, int(code), out)...), noiseBytes(after)...)
		got := decodeStream(stream, cuts)
		want := []reply{{seq: seq, code: int(code), out: string(out)}}
		if !reflect.DeepEqual(got.frames, want) {
			t.Fatalf("stream %q: frames %+v, want %+v", stream, got.frames, want)
		}
	})
}

// noiseBytes returns b without the bytes the server would not send outside
// a frame without meaning a frame (STX) or a telnet command (IAC).
func noiseBytes(b []byte) []byte {
	var out []byte
	for _, c := range b {
		if c != stx && c != iac {
			out = append(out, c)
		}
	}
	return out
}

// telnetData is the data a telnet stream carries, written apart from the
// decoder: IAC IAC is a 0xff byte; IAC WILL/WONT/DO/DONT take one option
// byte and IAC SB runs to IAC SE; IAC and another command byte (240-249)
// carry nothing; a stray IAC before any other byte is dropped and the byte
// kept.
func telnetData(stream []byte) []byte {
	var out []byte
	for i := 0; i < len(stream); i++ {
		c := stream[i]
		if c != 0xff {
			out = append(out, c)
			continue
		}
		if i+1 >= len(stream) {
			break
		}
		i++
		switch n := stream[i]; {
		case n == 0xff:
			out = append(out, n)
		case n >= 251: // WILL, WONT, DO, DONT and their option
			i++
		case n == 250: // SB ... IAC SE
			for i+1 < len(stream) && !(stream[i] == 0xff && stream[i+1] == 240) {
				i++
			}
			i++
		case n >= 240:
		default:
			out = append(out, n)
		}
	}
	return out
}
