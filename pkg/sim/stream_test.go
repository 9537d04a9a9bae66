package sim

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"testing"
	"testing/iotest"
)

func TestStreamDataLength(t *testing.T) {
	for _, ending := range []string{"crlf", "lf", "cr"} {
		for _, n := range []int{0, 1, 8, 9, 62, 63, 64, 65, 127, 128, 129, 1000, 100000} {
			t.Run(fmt.Sprintf("%s %d", ending, n), func(t *testing.T) {
				if got := len(StreamData(n, ending)); got != n {
					t.Fatalf("len(StreamData(%d, %q)) = %d", n, ending, got)
				}
			})
		}
	}
	t.Run("negative", func(t *testing.T) {
		if got := StreamData(-3, "crlf"); len(got) != 0 {
			t.Fatalf("StreamData(-3) = %q, want no data", got)
		}
	})
}

func TestStreamDataLines(t *testing.T) {
	tests := []struct {
		ending string
		le     string
		first  string
	}{
		{"crlf", "\r\n", "00000000 ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFGHIJKLMNOPQRSTUVWXYZA\r\n"},
		{"lf", "\n", "00000000 ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFGHIJKLMNOPQRSTUVWXYZAB\n"},
		{"cr", "\r", "00000000 ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFGHIJKLMNOPQRSTUVWXYZAB\r"},
		{"\r\n", "\r\n", "00000000 ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFGHIJKLMNOPQRSTUVWXYZA\r\n"},
		{"", "\r\n", "00000000 ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFGHIJKLMNOPQRSTUVWXYZA\r\n"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.ending), func(t *testing.T) {
			const lines = 300
			data := StreamData(lines*StreamLineLen, tt.ending)
			if got := string(data[:StreamLineLen]); got != tt.first {
				t.Fatalf("first line = %q, want %q", got, tt.first)
			}
			line := regexp.MustCompile(`^(\d{8}) ([A-Z]+)` + regexp.QuoteMeta(tt.le) + `$`)
			for k := range lines {
				l := data[k*StreamLineLen : (k+1)*StreamLineLen]
				m := line.FindSubmatch(l)
				if m == nil {
					t.Fatalf("line %d = %q, not a numbered line of letters", k, l)
				}
				if want := fmt.Sprintf("%08d", k); string(m[1]) != want {
					t.Fatalf("line %d is numbered %s, want %s", k, m[1], want)
				}
				if want := byte('A' + k%26); m[2][0] != want {
					t.Fatalf("line %d starts with %c, want %c", k, m[2][0], want)
				}
			}
		})
	}
}

func TestStreamDataIsAPrefixOfLongerData(t *testing.T) {
	long := StreamData(10000, "crlf")
	for _, n := range []int{1, 63, 64, 65, 9999} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			if short := StreamData(n, "crlf"); !bytes.Equal(short, long[:n]) {
				t.Fatalf("StreamData(%d) is not the first %d bytes of StreamData(10000)", n, n)
			}
		})
	}
}

func TestStreamReader(t *testing.T) {
	const n = 100003
	want := StreamData(n, "lf")
	tests := []struct {
		name string
		r    io.Reader
	}{
		{"one byte at a time", iotest.OneByteReader(NewStreamReader(n, "lf"))},
		{"half reads", iotest.HalfReader(NewStreamReader(n, "lf"))},
		{"odd sizes", &oddReader{r: NewStreamReader(n, "lf")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := io.ReadAll(tt.r)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				i := firstDiff(got, want)
				t.Fatalf("got %d bytes, differing at %d from StreamData", len(got), i)
			}
		})
	}
	t.Run("line numbers wrap after 10^8 lines", func(t *testing.T) {
		r := NewStreamReader(100000001*StreamLineLen, "crlf")
		r.pos = 100000000 * StreamLineLen
		got := make([]byte, 9)
		if _, err := io.ReadFull(r, got); err != nil {
			t.Fatal(err)
		}
		if string(got) != "00000000 " {
			t.Fatalf("line 10^8 starts %q, want the number to wrap to 00000000", got)
		}
	})
	t.Run("unknown line ending panics", func(t *testing.T) {
		defer func() {
			if recover() == nil {
				t.Fatal("no panic")
			}
		}()
		NewStreamReader(10, "crcr")
	})
}

// oddReader reads in sizes that cycle through 1..97 bytes, so reads start
// and end at every offset within a line.
type oddReader struct {
	r    io.Reader
	next int
}

func (o *oddReader) Read(p []byte) (int, error) {
	o.next = o.next%97 + 1
	return o.r.Read(p[:min(len(p), o.next)])
}
