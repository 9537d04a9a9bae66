package openocd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/testenv"
)

// jtagRecordings are raw telnet streams recorded by pkg/sim/jtag's tests:
// plain commands typed at the prompt, without hilrun's framing. The
// decoder must turn them into the lines a person would have seen.
const jtagRecordings = "../sim/jtag/testdata/telnet"

func TestDecoderOnPlainSessions(t *testing.T) {
	if _, err := os.Stat(jtagRecordings); err != nil {
		testenv.Missing(t, "pkg/sim/jtag's recordings are absent: %v", err)
	}
	tests := []struct {
		file  string
		lines []string // the start of each line, in order
	}{
		{"connect.bin", []string{"Open On-Chip Debugger"}},
		{"error_read.bin", []string{"mdw 0x30000000", "JTAG-DP STICKY ERROR", "Failed to read memory at 0x30000000"}},
		{"wait_info.bin", []string{"mdw 0x20000004", "DAP transaction stalled (WAIT) - slowing down and resending", "0x20000004: 00000000"}},
		{"async_log.bin", []string{
			"accepting 'telnet' connection on tcp/", "JTAG-DP STICKY ERROR", "Failed to read memory at 0x30000000",
			"mdw 0x20000004", "0x20000004: 00000000",
		}},
		{"shutdown.bin", []string{"shutdown", "shutdown command invoked"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(jtagRecordings, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			for _, bytewise := range []bool{false, true} {
				var d decoder
				if bytewise {
					for i := range b {
						d.feed(b[i : i+1])
						if r, ok := d.next(); ok {
							t.Fatalf("a frame in a plain session: %+v", r)
						}
					}
				} else {
					d.feed(b)
					if r, ok := d.next(); ok {
						t.Fatalf("a frame in a plain session: %+v", r)
					}
				}
				var got []string
				for _, l := range d.takeLines() {
					got = append(got, l.text)
				}
				if len(got) != len(tt.lines) {
					t.Fatalf("bytewise %v: lines %q, want %d starting %q", bytewise, got, len(tt.lines), tt.lines)
				}
				for i, l := range got {
					if !strings.HasPrefix(l, tt.lines[i]) || strings.ContainsAny(l, "\b\x00\r") {
						t.Errorf("line %d is %q, want it to start %q", i+1, l, tt.lines[i])
					}
				}
			}
		})
	}
}
