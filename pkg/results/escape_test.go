package results

import (
	"encoding/xml"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEscape(t *testing.T) {
	tests := []struct {
		name string
		in   string
		mode escapeMode
		want string
	}{
		{"plain", "hello world", 0, "hello world"},
		{"utf8 kept", "été ✓ 日本", 0, "été ✓ 日本"},
		{"controls", "a\x00\x07\x1b[0m\x7f", 0, `a\x00\x07\x1b[0m\x7f`},
		{"invalid utf8", "\xff\xfe\xc3", 0, `\xff\xfe\xc3`},
		{"surrogate", "\xed\xa0\x80", 0, `\xed\xa0\x80`},
		{"noncharacters", "\uFFFE\uFFFF\u0085\U0010FFFF", 0, `\ufffe\uffff\u0085\U0010ffff`},
		{"one line", "a\tb\r\nc\rd", 0, `a\tb\r\nc\rd`},
		{"layout", "a\tb\r\nc\rd\n", keepLayout, "a\tb\nc\\rd\n"},
		{"backslash readable", `C:\>`, 0, `C:\>`},
		{"backslash reversible", `C:\>` + "\n", reversible, `C:\\>\n`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := escape(tt.in, tt.mode); got != tt.want {
				t.Errorf("escape(%q, %d) = %q, want %q", tt.in, tt.mode, got, tt.want)
			}
		})
	}
}

// TestEscapeEveryByte checks that any byte, alone or after another, comes out
// as valid UTF-8 that XML 1.0 accepts in every mode.
func TestEscapeEveryByte(t *testing.T) {
	for _, mode := range []escapeMode{0, keepLayout, reversible, keepLayout | reversible} {
		for a := 0; a < 256; a++ {
			for _, b := range []int{-1, 0x80, 0xa9, 0x0a} {
				in := string([]byte{byte(a)})
				if b >= 0 {
					in += string([]byte{byte(b)})
				}
				out := escape(in, mode)
				if !utf8.ValidString(out) {
					t.Fatalf("escape(%q, %d) = %q: invalid UTF-8", in, mode, out)
				}
				for _, r := range out {
					if !xmlChar(r) {
						t.Fatalf("escape(%q, %d) = %q: holds %U, which XML forbids", in, mode, out, r)
					}
				}
				var v struct {
					S string `xml:",chardata"`
				}
				if err := xml.Unmarshal([]byte("<s>"+xmlText(out)+"</s>"), &v); err != nil {
					t.Fatalf("escape(%q, %d) = %q does not parse: %v", in, mode, out, err)
				}
			}
		}
	}
}

func xmlChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF
}

func xmlText(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
