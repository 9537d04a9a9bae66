package gdbremote

import (
	"bytes"
	"testing"
)

// FuzzDecoder feeds the decoder arbitrary bytes, whole and split in two,
// and checks that it never panics, keeps packets within maxPacket, finds
// the same events however the bytes arrive, and that framing any data as
// an X packet's escaped payload decodes back to it.
func FuzzDecoder(f *testing.F) {
	for _, seed := range []string{
		"+$OK#9a",
		"$T02thread:01;#04+$PacketSize=1000;qXfer:features:read+#37",
		"$0* #76",
		"$00*\"#7f",
		"$}]}\x03}\x04}\x0a#00",
		"$E14#aa-",
		"\xff\xfb\x01Open On-Chip Debugger\r\n> ",
		"$abc$def#00",
		"$O48656c6c6f0a#1d$OK#9a",
		"$*#2a",
		"$}#7d",
		"%Stop:T05#00",
		"$zz#zz",
	} {
		f.Add([]byte(seed), uint(3))
	}
	f.Fuzz(func(t *testing.T, in []byte, split uint) {
		var whole decoder
		whole.feed(in)
		var parts decoder
		k := int(split % uint(len(in)+1))
		parts.feed(in[:k])
		parts.feed(in[k:])
		if len(whole.pending) != len(parts.pending) {
			t.Fatalf("%d events fed whole, %d fed in two parts", len(whole.pending), len(parts.pending))
		}
		for i, e := range whole.pending {
			p := parts.pending[i]
			if e.kind != p.kind || !bytes.Equal(e.data, p.data) || (e.err == nil) != (p.err == nil) {
				t.Fatalf("event %d differs: %q %q %v / %q %q %v", i, e.kind, e.data, e.err, p.kind, p.data, p.err)
			}
			if len(e.data) > maxPacket {
				t.Fatalf("packet of %d bytes", len(e.data))
			}
			if e.err == nil && e.kind != '$' && e.kind != '%' && e.data != nil {
				t.Fatalf("an ack with data %q", e.data)
			}
		}
		if whole.nNoise > len(in) || len(whole.noise) > maxNoiseKept {
			t.Fatalf("noise count %d, kept %d", whole.nNoise, len(whole.noise))
		}
		_ = LooksLikeRSP(in)

		// Any data survives escaping, framing and decoding.
		if len(in) <= maxPacket/2 {
			var d decoder
			d.feed(frame(nil, escapeBinary(nil, in)))
			e, ok := d.next()
			if !ok || e.err != nil || e.kind != '$' || !bytes.Equal(e.data, in) {
				t.Fatalf("framed %q decoded as %q, %v (ok %v)", in, e.data, e.err, ok)
			}
			if _, more := d.next(); more || d.nNoise != 0 {
				t.Fatal("a framed packet left more events or noise")
			}
		}
	})
}
