package stream

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// Quote renders b on one line for messages and logs: printable ASCII and
// printable UTF-8 are kept, \r \n \t become `\r` `\n` `\t`, a backslash and a
// double quote are escaped, and every other byte (control bytes, invalid
// UTF-8) becomes `\xNN`. The result is the body of a Go double-quoted string
// literal that denotes exactly b, so strconv.Unquote(`"` + Quote(b) + `"`)
// returns b.
func Quote(b []byte) string {
	var sb strings.Builder
	sb.Grow(len(b))
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		switch {
		case r == utf8.RuneError && n <= 1:
			writeHex(&sb, b[0])
		case r == '\r':
			sb.WriteString(`\r`)
		case r == '\n':
			sb.WriteString(`\n`)
		case r == '\t':
			sb.WriteString(`\t`)
		case r == '\\':
			sb.WriteString(`\\`)
		case r == '"':
			sb.WriteString(`\"`)
		case r < utf8.RuneSelf && (r < 0x20 || r == 0x7f):
			writeHex(&sb, b[0])
		case r >= utf8.RuneSelf && !unicode.IsPrint(r):
			// Escape the encoding byte by byte: a literal with \xNN for
			// each byte still denotes the same bytes.
			for _, c := range b[:n] {
				writeHex(&sb, c)
			}
		default:
			sb.Write(b[:n])
		}
		b = b[n:]
	}
	return sb.String()
}

// Printable renders b over several lines for reports: printable ASCII and
// printable UTF-8 are kept, "\n" stays a line break and a "\r" just before
// it is dropped, a lone "\r" and "\t" become `\r` and `\t`, and every other
// control byte or invalid UTF-8 byte becomes `\xNN`. Backslashes are kept
// as they are, so the result is for reading, not for decoding.
func Printable(b []byte) string {
	var sb strings.Builder
	sb.Grow(len(b))
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		switch {
		case r == utf8.RuneError && n <= 1:
			writeHex(&sb, b[0])
		case r == '\n':
			sb.WriteByte('\n')
		case r == '\r':
			if len(b) > 1 && b[1] == '\n' {
				break // CRLF renders as a plain line break
			}
			sb.WriteString(`\r`)
		case r == '\t':
			sb.WriteString(`\t`)
		case r < utf8.RuneSelf && (r < 0x20 || r == 0x7f):
			writeHex(&sb, b[0])
		case r >= utf8.RuneSelf && !unicode.IsPrint(r):
			for _, c := range b[:n] {
				writeHex(&sb, c)
			}
		default:
			sb.Write(b[:n])
		}
		b = b[n:]
	}
	return sb.String()
}

func writeHex(sb *strings.Builder, c byte) {
	sb.WriteString(`\x`)
	sb.WriteByte(hexDigits[c>>4])
	sb.WriteByte(hexDigits[c&0xf])
}
