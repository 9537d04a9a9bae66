package stream

import (
	"regexp/syntax"
	"slices"
	"testing"
)

// FuzzExpectChunks feeds a text to the matcher in up to three chunks, cut
// where the fuzzer says, followed by a NUL byte as a delimiter, and commits
// a match only when it is final, as a waiting Expect does. Properties:
// a committed match is the one the whole text gives (no match that the
// whole text would not give, and no group that is a strict prefix of the
// whole text's). A match not yet committed is held, which is always
// allowed: the settle time ends the hold. Patterns with $ or \z are left
// out: those match at the end of what has arrived by design.
func FuzzExpectChunks(f *testing.F) {
	seeds := []struct {
		re, text string
		i, j     uint16
	}{
		{`adc=(?P<adc>\d+)`, "adc=4095\r\n", 6, 8},
		{`v(\d+)\.(\d+)\.(\d+)`, "fw v1.22.333\r\n> ", 7, 10},
		{`size\s*=\s*(0x[0-9a-f]+)`, "flashsize = 0x08000000\r\n", 16, 18},
		{`a|ab`, "xab", 2, 3},
		{`ab|a`, "xab", 2, 3},
		{`abcd|c`, "abcd", 3, 3},
		{`x*`, "xxy", 1, 2},
		{`\d+?`, "123", 1, 2},
		{`(?s).*`, "a\nb", 1, 2},
		{`ok$`, "ok\n", 2, 2},
		{`(?m)ok$`, "ok\nok", 2, 4},
		{`ok\b`, "okk ok", 2, 5},
		{`^b`, "a\nb", 2, 2},
		{`(?m)^v\d+$`, "v1\nv22\n", 2, 5},
		{`é+`, "éé\xc3\xa9", 3, 5},
		{`\d{1,4}`, "12345", 2, 4},
		{`(a|ab)(c|bcd)`, "abcd", 1, 3},
	}
	for _, s := range seeds {
		f.Add(s.re, []byte(s.text), s.i, s.j)
	}
	f.Fuzz(func(t *testing.T, expr string, text []byte, i, j uint16) {
		if len(expr) > 64 || len(text) > 512 {
			return
		}
		p, err := Regexp(expr)
		if err != nil || endAnchored(expr) {
			return
		}
		const delim = "\x00"
		whole := append(slices.Clip(text), delim...)
		var want []string
		if m, ok := Find(whole, []Pattern{p}); ok {
			want = m.Groups
		}
		a := int(i) % (len(text) + 1)
		b := a + int(j)%(len(text)-a+1)
		chunks := []string{string(text[:a]), string(text[a:b]), string(text[b:]), delim}
		got, _, ok := commitChunks(NewBuffer(0), chunks, []Pattern{p})
		if ok && !slices.Equal(got, want) {
			t.Fatalf("%s: chunks %q committed %q, the whole text gives %q", expr, chunks, got, want)
		}
	})
}

// endAnchored reports whether expr has a $ or \z, which match at the end
// of what has arrived rather than wait for the next byte.
func endAnchored(expr string) bool {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return false
	}
	var walk func(*syntax.Regexp) bool
	walk = func(re *syntax.Regexp) bool {
		if re.Op == syntax.OpEndText || re.Op == syntax.OpEndLine {
			return true
		}
		return slices.ContainsFunc(re.Sub, walk)
	}
	return walk(re)
}
