package results

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// escapeMode selects how escape treats layout characters and backslashes.
type escapeMode uint8

const (
	// keepLayout keeps '\n' and '\t' as they are and turns "\r\n" into "\n",
	// for multi-line text. Without it they are escaped, so the result is
	// one line.
	keepLayout escapeMode = 1 << iota
	// reversible doubles backslashes, so the escaped text can be turned back
	// into the original bytes. Without it a backslash in the input reads the
	// same as one introduced by escaping, which is fine for text meant for
	// reading.
	reversible
)

// escape returns s with every byte sequence that is not printable UTF-8
// written as an escape: \xNN for invalid bytes and ASCII control characters,
// \r, \n and \t by name, \uNNNN or \UNNNNNNNN for other runes that do not
// print (C1 controls, U+FFFE, private use). The result is valid UTF-8 and
// holds only characters XML 1.0 allows.
func escape(s string, mode escapeMode) string {
	if isClean(s, mode) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + len(s)/8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\r' && mode&keepLayout != 0 && strings.HasPrefix(s[i+1:], "\n"):
			// A serial console ends its lines with CR LF; XML readers fold
			// that to LF anyway.
		case r == '\n' || r == '\t':
			if mode&keepLayout != 0 {
				b.WriteRune(r)
			} else if r == '\n' {
				b.WriteString(`\n`)
			} else {
				b.WriteString(`\t`)
			}
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\\':
			if mode&reversible != 0 {
				b.WriteString(`\\`)
			} else {
				b.WriteByte('\\')
			}
		case unicode.IsPrint(r):
			b.WriteString(s[i : i+size])
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
		i += size
	}
	return b.String()
}

// isClean reports whether escape would return s unchanged, which is the common
// case and saves building a copy.
func isClean(s string, mode escapeMode) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= utf8.RuneSelf:
			// Leave non-ASCII text to the slow path, which checks it rune
			// by rune.
			return false
		case c == '\n' || c == '\t':
			if mode&keepLayout == 0 {
				return false
			}
		case c == '\\':
			if mode&reversible != 0 {
				return false
			}
		case c < 0x20 || c == 0x7f:
			return false
		}
	}
	return true
}

// CleanLine escapes s for printing on one line: names, messages, attributes.
func CleanLine(s string) string { return escape(s, 0) }

// CleanText escapes s for printing as multi-line text: transcripts, received
// output, failure details.
func CleanText(s string) string { return escape(s, keepLayout) }

// QuoteBytes escapes b as one line from which the bytes can be recovered, as
// strconv.Quote does but without the quotes and keeping printable UTF-8.
func QuoteBytes(b []byte) string { return escape(string(b), reversible) }
