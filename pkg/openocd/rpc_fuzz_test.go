package openocd

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"
)

// The Tcl RPC framing's fuzz target; its seed corpus is under
// testdata/fuzz/FuzzRPCDecoder. Run it for a while with
//
//	go test -run '^$' -fuzz '^FuzzRPCDecoder$' -fuzztime 1m ./pkg/openocd

// rpcDecoded is everything an rpcDecoder gave for a stream.
type rpcDecoded struct {
	frames []rpcReply
	msgs   []string
	err    string
	rest   []byte
}

// decodeRPCStream feeds stream to a new rpcDecoder in the pieces cuts
// gives (as decodeStream does), taking every reply and message after each
// piece, until the decoder reports an error (then the bytes it kept do not
// matter: the session drops the connection).
func decodeRPCStream(stream, cuts []byte) rpcDecoded {
	var d rpcDecoder
	var out rpcDecoded
	take := func() bool {
		for {
			r, msg, ok, err := d.next()
			if err != nil {
				out.err = err.Error()
				return false
			}
			if !ok {
				return true
			}
			if r.seq == 0 {
				out.msgs = append(out.msgs, msg)
			} else {
				out.frames = append(out.frames, r)
			}
		}
	}
	for _, c := range cuts {
		if len(stream) == 0 || out.err != "" {
			break
		}
		n := min(max(int(c), 1), len(stream))
		d.feed(stream[:n])
		stream = stream[n:]
		if !take() {
			break
		}
	}
	if len(stream) > 0 && out.err == "" {
		d.feed(stream)
		take()
	}
	if out.err == "" {
		out.rest = append([]byte(nil), d.buf...)
	}
	return out
}

// rpcFrame is what _hilrun_rpc returns for a reply, and the server's SUB.
func rpcFrame(r rpcReply) []byte {
	return fmt.Appendf(nil, "\x02%d %d %d %d\x03%s%s\x04%d\x1a", r.seq, r.code, len(r.log), len(r.out), r.log, r.out, r.seq)
}

// FuzzRPCDecoder feeds an arbitrary byte stream to the Tcl RPC decoder,
// split at arbitrary places, and a well-formed reply holding arbitrary
// log and output. The decoder never panics; gives the same replies,
// messages and error however the stream is split; keeps no more bytes
// than it was given; and decodes the well-formed reply, alone or after
// a notification, to exactly its log and output, in any split: a value
// is never wrong.
func FuzzRPCDecoder(f *testing.F) {
	f.Add([]byte("\x021 0 0 28\x03Open On-Chip Debugger 0.12.0\x041\x1a"), []byte{1, 7, 64}, "", "0x2a")
	f.Add([]byte("\x022 1 122 34\x03JTAG-DP STICKY ERROR\nFailed to read memory at 0x30000000\nread_memory: read at 0x30000000 with width=32 and count=1 failed\nread_memory: failed to read memory\x042\x1a"), []byte{3}, "log\x1a\n", "a\x1a\x00\x02b")
	f.Add([]byte("type target_event event halted\r\n\x1a\x023 -601 5 0\x03usage\x043\x1a"), []byte{0, 0, 9}, "", "")
	f.Add([]byte("line too long\n\x00"), []byte{}, "\x04", "\x041\x1a")
	f.Add([]byte("\x0299999999999999999999 0 0 0\x03\x041\x1a"), []byte{2}, "x", "\x1a")
	f.Fuzz(func(t *testing.T, stream, cuts []byte, log, out string) {
		whole := decodeRPCStream(stream, nil)
		split := decodeRPCStream(stream, cuts)
		// An error quotes the bytes it stopped at, which depend on the
		// split; that there is one does not.
		if (whole.err == "") != (split.err == "") {
			t.Fatalf("an error depends on the split:\nwhole %+v\nsplit %+v", whole, split)
		}
		whole.err, split.err = "", ""
		if !reflect.DeepEqual(whole, split) {
			t.Fatalf("the result depends on the split:\nwhole %+v\nsplit %+v", whole, split)
		}
		if len(whole.rest) > len(stream) {
			t.Fatalf("keeps %d bytes of a %d-byte stream", len(whole.rest), len(stream))
		}
		for _, r := range whole.frames {
			if !bytes.Contains(stream, []byte(r.log)) || !bytes.Contains(stream, []byte(r.out)) {
				t.Fatalf("a reply %+v that the stream does not hold", r)
			}
		}

		want := rpcReply{seq: 7, code: -4, log: log, out: out}
		msg := []byte("type target_state state halted\r\n\x1a")
		for _, prefix := range [][]byte{nil, msg} {
			good := append(append([]byte(nil), prefix...), rpcFrame(want)...)
			got := decodeRPCStream(good, cuts)
			if got.err != "" || len(got.frames) != 1 || !reflect.DeepEqual(got.frames[0], want) || len(got.rest) != 0 {
				t.Fatalf("a well-formed reply %q decodes to %+v, want %+v", good, got, want)
			}
		}
	})
}
