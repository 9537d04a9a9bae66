package stream

import (
	"regexp/syntax"
	"strings"
)

// re2Hint says what to write instead when expr uses a feature of Perl's,
// PCRE's or Python's regexps that Go's RE2 leaves out on purpose (its
// matching time stays linear in the input), or "" for other errors.
func re2Hint(expr string, se *syntax.Error) string {
	switch {
	case strings.Contains(expr, "(?<=") || strings.Contains(expr, "(?<!"):
		return "Go's RE2 has no lookbehind ((?<=...), (?<!...)): match the text before as well, and capture the part you want: `x(y)` instead of `(?<=x)y`"
	case strings.Contains(expr, "(?=") || strings.Contains(expr, "(?!"):
		return "Go's RE2 has no lookahead ((?=...), (?!...)): match the text after as well, and capture the part you want: `(x)y` instead of `x(?=y)`"
	case strings.Contains(expr, "(?>"):
		return "Go's RE2 has no atomic groups ((?>...)), and needs none: it never backtracks, so write the group without ?>"
	case se.Code == syntax.ErrInvalidEscape && len(se.Expr) == 2 && se.Expr[1] >= '1' && se.Expr[1] <= '9',
		se.Code == syntax.ErrInvalidEscape && strings.HasPrefix(se.Expr, `\k`):
		return "Go's RE2 has no backreferences (" + se.Expr + "): capture each part on its own and compare them in an assert step"
	case se.Code == syntax.ErrInvalidRepeatOp && (strings.HasSuffix(se.Expr, "++") || strings.HasSuffix(se.Expr, "*+") || strings.HasSuffix(se.Expr, "?+") || strings.HasSuffix(se.Expr, "}+")):
		return "Go's RE2 has no possessive quantifiers (" + se.Expr + "), and needs none: it never backtracks, so drop the last +"
	}
	return ""
}
