package stream

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"testing"
)

func TestQuote(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{name: "plain", in: "hello 1.0", want: "hello 1.0"},
		{name: "line endings", in: "ok\r\n", want: `ok\r\n`},
		{name: "tab", in: "a\tb", want: `a\tb`},
		{name: "quote and backslash", in: `say "\x"`, want: `say \"\\x\"`},
		{name: "control bytes", in: "\x00\x1b[0m\x7f", want: `\x00\x1b[0m\x7f`},
		{name: "utf-8 kept", in: "température 23°C ✓", want: "température 23°C ✓"},
		{name: "invalid utf-8", in: "a\xff\xfeb", want: `a\xff\xfeb`},
		{name: "truncated utf-8", in: "\xe2\x9c", want: `\xe2\x9c`},
		{name: "non-printable rune", in: "a\u200bb", want: `a\xe2\x80\x8bb`},
		{name: "empty", in: "", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Quote([]byte(tt.in)); got != tt.want {
				t.Errorf("Quote(%q) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

// Quote must be unambiguous: read as a Go string literal it gives back the
// exact bytes.
func TestQuoteRoundTrip(t *testing.T) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	r := rand.New(rand.NewPCG(1, 2))
	inputs := [][]byte{all, []byte("✓\xe2\x9c\x93\xe2\x9c")}
	for range 200 {
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		inputs = append(inputs, b)
	}
	for _, in := range inputs {
		q := Quote(in)
		got, err := strconv.Unquote(`"` + q + `"`)
		if err != nil {
			t.Fatalf("Unquote(Quote(%q)) = %v (quoted %s)", in, err, q)
		}
		if !bytes.Equal([]byte(got), in) {
			t.Fatalf("Unquote(Quote(%q)) = %q", in, got)
		}
		if bytes.ContainsAny([]byte(q), "\r\n") {
			t.Fatalf("Quote(%q) spans lines: %s", in, q)
		}
	}
}

func TestPrintable(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{name: "lines kept", in: "a\nb\n", want: "a\nb\n"},
		{name: "crlf becomes newline", in: "boot\r\nok\r\n", want: "boot\nok\n"},
		{name: "lone cr escaped", in: "50%\r100%", want: `50%\r100%`},
		{name: "cr cr lf", in: "x\r\r\n", want: "x\\r\n"},
		{name: "tab escaped", in: "a\tb", want: `a\tb`},
		{name: "escape sequence", in: "\x1b[31mred\x1b[0m", want: `\x1b[31mred\x1b[0m`},
		{name: "backslash kept", in: `C:\dir "x"`, want: `C:\dir "x"`},
		{name: "invalid utf-8", in: "\xc3\x28", want: `\xc3(`},
		{name: "utf-8 kept", in: "µs ✓\n", want: "µs ✓\n"},
		{name: "nul", in: "\x00", want: `\x00`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Printable([]byte(tt.in)); got != tt.want {
				t.Errorf("Printable(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
