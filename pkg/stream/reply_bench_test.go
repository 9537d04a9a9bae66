package stream

import (
	"context"
	"testing"
	"time"
)

// BenchmarkExpectReply is the matching cost of one send/expect round trip:
// a reply is appended, then Expect finds it from the cursor before it.
// A literal never runs the finality check; a regexp whose match a
// delimiter ends runs it once and commits at once.
func BenchmarkExpectReply(b *testing.B) {
	tests := []struct {
		name  string
		reply string
		pat   Pattern
	}{
		{"literal prompt", "ping-123\r\nsim> ", Literal("ping-123\r\nsim> ")},
		{"regexp delimited", "ping-123\r\nsim> ", MustRegexp(`ping-(\d+)\r\n`)},
		{"regexp then prompt", "adc=4095\r\nsim> ", MustRegexp(`adc=(?P<adc>\d+)`)},
	}
	for _, tt := range tests {
		b.Run(tt.name, func(b *testing.B) {
			buf := NewBuffer(0)
			reply := []byte(tt.reply)
			want := []Pattern{tt.pat}
			ctx := context.Background()
			now := time.Now()
			b.ReportAllocs()
			for b.Loop() {
				from := buf.End()
				buf.Append(now, reply)
				if _, err := buf.Expect(ctx, from, want, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
