package steps_test

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/steps"
)

// aliasBomb is a few hundred bytes of YAML whose aliases stand for 9^n
// steps.
func aliasBomb(levels int) string {
	var b strings.Builder
	b.WriteString("x:\n  a0: &a0 [{delay: 1ms}, {delay: 1ms}]\n")
	for i := 1; i <= levels; i++ {
		p := fmt.Sprintf("*a%d", i-1)
		fmt.Fprintf(&b, "  a%d: &a%d [%s]\n", i, i, strings.Repeat(p+", ", 8)+p)
	}
	fmt.Fprintf(&b, "steps:\n  - group: g\n    steps: *a%d\n", levels)
	return b.String()
}

func TestParseLimits(t *testing.T) {
	tests := []struct {
		name string
		file string
		src  string
		want []string // FILE:LINE:COL: message prefixes, in order
	}{
		{"alias bomb", "a.yaml", aliasBomb(30),
			[]string{`a.yaml:7:17: aliases expand the document by more than 100000 nodes (the alias expansion limit)`}},
		{"alias bomb in steps", "a.yaml", "steps:\n  - &s {group: g, steps: [{delay: 1ms}, {delay: 1ms}]}\n" +
			"  - &t {group: h, steps: [" + strings.Repeat("*s, ", 20000) + "*s]}\n" +
			"  - {group: i, steps: [*t, *t, *t, *t]}\n",
			[]string{`a.yaml:3:`}},
		{"a large anchor used many times", "a.yaml", "vars:\n  big: &b " + strings.Repeat("x", 1<<20) + "\n  copies: [" + strings.Repeat("*b, ", 10) + "*b]\nsteps: [{delay: 1ms}]\n",
			[]string{`a.yaml:3:28: aliases expand the document by more than 4 MiB of text (the alias expansion limit)`}},
		{"alias that contains itself", "a.yaml", "a: &a [*a]\nsteps: [*a]\n",
			[]string{`a.yaml:1:8: the alias *a contains itself`}},
		{"steps that contain themselves", "a.yaml", "steps: &s [{group: g, steps: *s}]\n",
			[]string{`a.yaml:1:30: the alias *s contains itself`}},
		{"read_timeout past the limit", "a.yaml", "steps:\n  - send: x\n    read_timeout: 1e300\n",
			[]string{`a.yaml:3:19: read_timeout (seconds) of 1e300 is too long: the longest is 24h`}},
		{"read_timeout too short", "a.yaml", "steps:\n  - send: x\n    read_timeout: 0.0000001\n",
			[]string{`a.yaml:3:19: read_timeout (seconds) of 100ns is too short: the shortest is 1ms`}},
		{"delay_ms past the limit", "a.yaml", "steps:\n  - delay_ms: 1e20\n",
			[]string{`a.yaml:2:15: delay_ms of 1e20 is too long: the longest is 24h`}},
		{"delay past the limit", "a.yaml", "steps:\n  - delay: 25h\n",
			[]string{`a.yaml:2:12: delay of 25h0m0s is too long: the longest is 24h`}},
		{"timeout too short", "a.yaml", "steps:\n  - expect: x\n    timeout: 1ns\n",
			[]string{`a.yaml:3:14: timeout of 1ns is too short: the shortest is 1ms (0 means the default)`}},
		{"timeout too long", "a.yaml", "steps:\n  - expect: x\n    timeout: 1000h\n",
			[]string{`a.yaml:3:14: timeout of 1000h0m0s is too long: the longest is 24h`}},
		{"memory step timeout", "a.yaml", "steps:\n  - mem_read: 0x20000000\n    timeout: 10us\n",
			[]string{`a.yaml:3:14: timeout of 10µs is too short`}},
		{"expect_timeout", "a.yaml", "expect_timeout: 1ns\nsteps: [{expect: x}]\n",
			[]string{`a.yaml:1:17: expect_timeout of 1ns is too short`}},
		{"sequence timeout", "a.yaml", "timeout: 1000h\nsteps: [{expect: x}]\n",
			[]string{`a.yaml:1:10: timeout of 1000h0m0s is too long: the longest is 720h`}},
		{"duration overflowing int64", "a.yaml", "steps:\n  - delay: 9999999999h\n",
			[]string{`a.yaml:2:12: delay: "9999999999h" is not a duration: it is too long to count in nanoseconds`}},
		{"capture window", "a.yaml", "steps:\n  - capture: {duration: 48h, until: x}\n",
			[]string{`a.yaml:2:25: duration of 48h0m0s is too long`}},
		{"poll interval", "a.yaml", "steps:\n  - mem_poll: 0x20000000\n    until: value == 1\n    interval: 1ns\n",
			[]string{`a.yaml:4:15: interval of 1ns is too short`}},
		{"repeat every", "a.yaml", "steps:\n  - repeat: {count: 2, every: 48h}\n    steps: [{delay: 1ms}]\n",
			[]string{`a.yaml:2:31: every of 48h0m0s is too long`}},
		{"power off_time", "a.yaml", "power: {dut: {on: [a], off: [b], off_time: 100h}}\nsteps: [{power: cycle}]\n",
			[]string{`a.yaml:1:44: off_time of 100h0m0s is too long`}},
		{"value wider than the width", "a.yaml", "steps:\n  - mem_write: 0x20000000\n    value: 0x1ffffffff\n",
			[]string{`a.yaml:3:12: value 0x1ffffffff does not fit in 32 bits (the step's width): the largest is 0xffffffff`}},
		{"value wider than 8 bits", "a.yaml", "steps:\n  - mem_write: 0x20000000\n    width: 8\n    value: [1, 256]\n",
			[]string{`a.yaml:4:16: value 256 does not fit in 8 bits`}},
		{"expected value wider than the width", "a.yaml", "steps:\n  - mem_read: 0x20000000\n    width: 16\n    expect: {mask: 0x1ffff, value: 1}\n",
			[]string{`a.yaml:4:20: mask 0x1ffff does not fit in 16 bits`}},
		{"address past the 32-bit space", "a.yaml", "steps:\n  - mem_read: 0xfffffff0\n    count: 8\n",
			[]string{`a.yaml:2:15: mem_read at 0xfffffff0 of 32 bytes (8 × 32 bits) runs past the end of the 32-bit address space (0xffffffff)`}},
		{"address past the 64-bit space", "a.yaml", "steps:\n  - mem_read: 0xfffffffffffffff8\n    width: 64\n    count: 2\n",
			[]string{`a.yaml:2:15: mem_read at 0xfffffffffffffff8 of 16 bytes (2 × 64 bits) runs past the end of the 64-bit address space`}},
		{"write past the 32-bit space", "a.yaml", "steps:\n  - mem_write: true\n    address: 0xfffffffc\n    value: [1, 2]\n",
			[]string{`a.yaml:3:14: mem_write at 0xfffffffc of 8 bytes (2 × 32 bits) runs past the end of the 32-bit address space`}},
		{"nested repeats past the execution limit", "a.yaml", "steps:\n  - repeat: 100000\n    steps:\n      - repeat: 100000\n        steps: [{delay: 1ms}]\n",
			[]string{`a.yaml:2:5: this repeat would run 10000000000 steps (100000 iterations of 100000), more than the limit of 100000000 steps per run (the execution limit)`}},
		{"repeat for and every past the execution limit", "a.yaml", "steps:\n  - repeat: {for: 720h, every: 1ms}\n    steps: [{delay: 1ms}, {delay: 1ms}]\n",
			[]string{`a.yaml:2:5: this repeat would run 5184000000 steps (2592000000 iterations of 2)`}},
		{"time-bounded repeat around a huge one", "a.yaml", "steps:\n  - repeat: {for: 1h}\n    steps:\n      - repeat: 100000000\n        steps: [{delay: 1ms}, {delay: 1ms}]\n",
			[]string{`a.yaml:4:9: this repeat would run 200000000 steps`}},
		{"many repeats past the execution limit", "a.yaml", "steps:\n" + strings.Repeat("  - repeat: 60000000\n    steps: [{delay: 1ms}]\n", 2),
			[]string{`a.yaml:1:1: the sequence would run 120000000 steps, more than the limit of 100000000 steps per run`}},
		{"group past the execution limit", "a.yaml", "steps:\n  - group: g\n    steps:\n" + strings.Repeat("      - repeat: 60000000\n        steps: [{delay: 1ms}]\n", 2),
			[]string{`a.yaml:2:5: this group would run 120000000 steps`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seq, err := steps.Parse(tt.file, []byte(tt.src), steps.LoadOptions{})
			if err == nil {
				t.Fatalf("no error; parsed %+v", seq)
			}
			var el steps.ErrorList
			if !errors.As(err, &el) {
				t.Fatalf("error is %T, want steps.ErrorList: %v", err, err)
			}
			if len(el) != len(tt.want) {
				t.Fatalf("got %d errors, want %d:\n%v", len(el), len(tt.want), err)
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(el[i].Error(), w) {
					t.Errorf("error %d:\n got %s\nwant %s", i, el[i].Error(), w)
				}
			}
		})
	}
}

// TestParseWithinLimits holds the limits to what they are for: values at
// the edges load.
func TestParseWithinLimits(t *testing.T) {
	tests := []struct {
		name string
		src  string
	}{
		{"zero timeouts mean the default", "steps:\n  - send: x\n    read_timeout: 0\n    expect: y\n  - expect: y\n    timeout: 0s\n"},
		{"longest delay", "steps:\n  - delay: 24h\n  - delay_ms: 86400000\n"},
		{"shortest timeout", "steps:\n  - expect: x\n    timeout: 1ms\n"},
		{"short delays", "steps:\n  - delay: 10ns\n  - delay_ms: 0.5\n"},
		{"widest value", "steps:\n  - mem_write: 0x20000000\n    value: 0xffffffff\n  - mem_write: 0x20000000\n    width: 64\n    value: 0xffffffffffffffff\n"},
		{"last word of the 32-bit space", "steps:\n  - mem_read: 0xfffffffc\n"},
		{"words above 4 GiB", "steps:\n  - mem_read: 0x100000000\n    count: 4\n"},
		{"a million-step soak", "steps:\n  - repeat: 1000\n    steps:\n      - repeat: 1000\n        steps: [{send: x}]\n"},
		{"execution limit exactly", "steps:\n  - repeat: 100000000\n    steps: [{delay: 1ms}]\n"},
		{"a soak bounded by time", "steps:\n  - repeat: {for: 72h}\n    steps: [{send: x}]\n"},
		{"aliases within the limit", "x: &s {delay: 1ms}\nsteps: [*s, *s, *s]\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := steps.Parse("a.yaml", []byte(tt.src), steps.LoadOptions{}); err != nil {
				// x: is unknown; only that may be reported.
				if !strings.Contains(err.Error(), `unknown key "x"`) || strings.Count(err.Error(), "\n") > 0 {
					t.Fatal(err)
				}
			}
		})
	}
}

func TestExecutions(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		want    uint64
		bounded bool
	}{
		{"flat", "steps: [{delay: 1ms}, {delay: 1ms}]\nfinally: [{delay: 1ms}]\n", 3, true},
		{"group", "steps:\n  - group: g\n    steps: [{delay: 1ms}, {delay: 1ms}]\n", 2, true},
		{"nested repeats multiply", "steps:\n  - repeat: 10\n    steps:\n      - delay: 1ms\n      - repeat: 3\n        steps: [{delay: 1ms}, {delay: 1ms}]\n", 70, true},
		{"every and for", "steps:\n  - repeat: {for: 1s, every: 300ms}\n    steps: [{delay: 1ms}]\n", 4, true},
		{"count caps every and for", "steps:\n  - repeat: {count: 2, for: 1s, every: 300ms}\n    steps: [{delay: 1ms}]\n", 2, true},
		{"for alone is bounded by time only", "steps:\n  - repeat: {for: 1s}\n    steps: [{delay: 1ms}, {delay: 1ms}]\n", 2, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seq, err := steps.Parse("a.yaml", []byte(tt.src), steps.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			n, bounded := steps.Executions(seq)
			if n != tt.want || bounded != tt.bounded {
				t.Errorf("Executions = %d, %v; want %d, %v", n, bounded, tt.want, tt.bounded)
			}
		})
	}
}

func TestIterationsSaturate(t *testing.T) {
	s := &steps.Step{Kind: steps.KindRepeat, For: time.Duration(math.MaxInt64), Every: 1}
	if n, ok := steps.Iterations(s); n != math.MaxInt64 || !ok {
		t.Errorf("Iterations = %d, %v", n, ok)
	}
}

func TestFileSizeLimit(t *testing.T) {
	big := "steps:\n" + strings.Repeat("  - delay: 1ms\n", steps.MaxFileBytes/15+1)
	path := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(path, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, load := range map[string]func() error{
		"Load":      func() error { _, err := steps.Load(files.Anywhere(), path, steps.LoadOptions{}); return err },
		"Parse":     func() error { _, err := steps.Parse(path, []byte(big), steps.LoadOptions{}); return err },
		"LoadBench": func() error { _, err := steps.LoadBench(files.Anywhere(), path); return err },
	} {
		t.Run(name, func(t *testing.T) {
			err := load()
			want := path + ":1:1: the file is larger than the file size limit of 4 MiB"
			if err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("got %v, want %s", err, want)
			}
		})
	}
}

func TestErrorCountLimit(t *testing.T) {
	src := "steps:\n" + strings.Repeat("  - delay: 1\n", 150)
	_, err := steps.Parse("a.yaml", []byte(src), steps.LoadOptions{})
	var el steps.ErrorList
	if !errors.As(err, &el) {
		t.Fatalf("got %v", err)
	}
	if len(el) != steps.MaxErrors+1 {
		t.Fatalf("got %d errors, want %d", len(el), steps.MaxErrors+1)
	}
	if last := el[len(el)-1].Error(); !strings.HasSuffix(last, "and 50 more problems (only the first 100 are shown)") {
		t.Errorf("last error: %s", last)
	}
}
