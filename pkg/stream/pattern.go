// Package stream keeps a bounded record of a device's output and matches
// patterns against it.
//
// Every byte a console ever received has an absolute offset, counted from 0
// when the console opened. A cursor is such an offset. Searches start at a
// cursor and see only bytes at or after it, which is how a sequence step that
// sends "version" and expects "1.0" ignores a "1.0" printed before the send.
//
// A Buffer retains only its most recent bytes (1 MiB by default); the whole
// stream belongs in a log file. A cursor older than the retained bytes is
// moved forward to the oldest retained byte.
//
// Searches are incremental: a waiting Expect scans each new chunk once, plus
// an overlap so that matches straddling two chunks are found, never the whole
// retained buffer again. A regexp match may be as long as the Buffer: a
// regexp is followed byte by byte (see tracker), so the overlap is where
// the oldest match still possible began, however far back that is.
package stream

import (
	"bytes"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"
)

// Pattern is a compiled literal or RE2 regular expression. The zero Pattern
// matches nothing. Patterns are immutable and safe for concurrent use; two
// Patterns compare equal when they come from the same Literal or Regexp
// call.
type Pattern struct {
	p *pattern
}

type pattern struct {
	src string
	lit []byte         // literal bytes; nil for a regexp
	re  *regexp.Regexp // nil for a literal
	// prog is the regexp's program as package regexp runs it, for
	// finalLocked; nil for a literal.
	prog *syntax.Prog
	vms  sync.Pool // of *vm for prog, reused by pending
	// noNewline is set for a regexp that cannot match a '\n'. Its matches
	// never span lines, so a look for threads alive at the end need not
	// look back past the last newline.
	noNewline bool
	// skip finds where a match may begin, for trackers; nil when every
	// position must be tried.
	skip skipFunc
	// after is the regexp run from the rune before where a search
	// resumes, with that rune as the context of ^ and \b (see findAt);
	// made on first use.
	afterOnce sync.Once
	after     *regexp.Regexp
}

// Literal returns a Pattern matching the exact bytes of s. An empty literal
// matches at the start of any search.
func Literal(s string) Pattern {
	return Pattern{&pattern{src: s, lit: []byte(s)}}
}

// Regexp compiles expr with Go's RE2 syntax (package regexp).
//
// Matching is against a stream that is still arriving, so the search window
// begins at a cursor and ends at the last byte received so far: ^ and \b may
// match where the window starts, and $ matches at the end of what has
// arrived (a prompt pattern `> $` is taken at once). A match that more bytes
// could change (`\d+` matching "12" while "3" is on its way, or one that
// relies on \b at the last byte received) is held by Expect, Capture and
// Watch until a byte arrives that decides it or the stream settles (see
// WithSettle); Find and Pattern.Find see only the bytes they are given. A
// pattern whose match a delimiter ends (`\d+\r?\n`) is never held.
func Regexp(expr string) (Pattern, error) {
	re, err := regexp.Compile(expr)
	if err != nil {
		return Pattern{}, &regexpError{expr: expr, err: err}
	}
	p := &pattern{src: expr, re: re}
	if tree, err := syntax.Parse(expr, syntax.Perl); err == nil {
		tree = tree.Simplify()
		p.noNewline = !canMatchNewline(tree)
		p.prog, _ = syntax.Compile(tree)
	}
	if p.prog != nil {
		prefix, _ := re.LiteralPrefix()
		p.skip = newSkip(p.prog, prefix)
	}
	return Pattern{p}, nil
}

// MustRegexp is like Regexp but panics if expr does not compile. It is meant
// for patterns that are constants of the program.
func MustRegexp(expr string) Pattern {
	p, err := Regexp(expr)
	if err != nil {
		panic(err)
	}
	return p
}

// regexpError explains a regexp that does not compile without repeating
// "error parsing regexp", and still unwraps to the *syntax.Error.
type regexpError struct {
	expr string
	err  error
}

func (e *regexpError) Error() string {
	var se *syntax.Error
	if se2, ok := e.err.(*syntax.Error); ok {
		se = se2
	}
	if se == nil {
		return fmt.Sprintf("invalid regexp %q: %v", e.expr, e.err)
	}
	if hint := re2Hint(e.expr, se); hint != "" {
		return fmt.Sprintf("invalid regexp %q: %s", e.expr, hint)
	}
	if se.Expr == "" || se.Expr == e.expr {
		return fmt.Sprintf("invalid regexp %q: %s", e.expr, se.Code)
	}
	return fmt.Sprintf("invalid regexp %q: %s: %q", e.expr, se.Code, se.Expr)
}

func (e *regexpError) Unwrap() error { return e.err }

// String returns the source text of the pattern: the literal itself or the
// regular expression as written. The zero Pattern returns "".
func (p Pattern) String() string {
	if p.p == nil {
		return ""
	}
	return p.p.src
}

// IsRegexp reports whether p was made by Regexp or MustRegexp.
func (p Pattern) IsRegexp() bool { return p.p != nil && p.p.re != nil }

// IsZero reports whether p is the zero Pattern, made by neither Literal nor
// Regexp.
func (p Pattern) IsZero() bool { return p.p == nil }

// Find returns the leftmost match of p in b as index pairs into b, like
// regexp.Regexp.FindSubmatchIndex: loc[0:2] is the whole match, loc[2*i:2*i+2]
// the i-th submatch (-1, -1 when it did not participate). A literal returns
// [start end]. Find returns nil when p does not match or is the zero Pattern.
func (p Pattern) Find(b []byte) []int {
	if p.p == nil {
		return nil
	}
	return p.p.find(b)
}

// SubexpNames returns the names of the parenthesized subexpressions, as
// regexp.Regexp.SubexpNames: element 0 is the whole match and is always "",
// unnamed groups are "". A literal returns [""]; the zero Pattern nil.
func (p Pattern) SubexpNames() []string {
	switch {
	case p.p == nil:
		return nil
	case p.p.re != nil:
		return p.p.re.SubexpNames()
	default:
		return []string{""}
	}
}

// describe renders p for messages: a literal quoted, a regexp between
// slashes.
func (p Pattern) describe() string {
	switch {
	case p.p == nil:
		return "<no pattern>"
	case p.p.re != nil:
		return "/" + p.p.src + "/"
	default:
		return `"` + Quote(p.p.lit) + `"`
	}
}

func describeAll(ps []Pattern) string {
	switch len(ps) {
	case 0:
		return "nothing"
	case 1:
		return ps[0].describe()
	}
	var sb strings.Builder
	sb.WriteString("any of ")
	for i, p := range ps {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(p.describe())
	}
	return sb.String()
}

func (p *pattern) find(b []byte) []int {
	if p.re != nil {
		return p.re.FindSubmatchIndex(b)
	}
	i := bytes.Index(b, p.lit)
	if i < 0 {
		return nil
	}
	return []int{i, i + len(p.lit)}
}

// resume returns where a search of the literal p must continue after it
// searched [from, end) without a match: a literal of length n that was not
// found cannot start before end-(n-1), where it would have fitted.
func (p *pattern) resume(from, end int64) int64 {
	return max(from, end-int64(len(p.lit))+1)
}

// afterRegexp returns p's regexp behind one rune of context: matched
// against text that begins a rune before where the search resumes, it
// finds the matches that begin after that rune, with ^, \A and \b judged
// as in the whole stream rather than as at the start of a text. It is nil
// for a regexp nested so deep that one more level does not compile.
func (p *pattern) afterRegexp() *regexp.Regexp {
	p.afterOnce.Do(func() {
		p.after, _ = regexp.Compile(`(?s:.)(?:` + p.src + `)`)
	})
	return p.after
}

// canMatchNewline reports whether the simplified regexp re can consume a
// '\n' byte. Empty-width assertions consume nothing.
func canMatchNewline(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if r == '\n' {
				return true
			}
		}
		return false
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			if re.Rune[i] <= '\n' && '\n' <= re.Rune[i+1] {
				return true
			}
		}
		return false
	case syntax.OpAnyChar:
		return true
	case syntax.OpAnyCharNotNL:
		return false
	}
	for _, sub := range re.Sub {
		if canMatchNewline(sub) {
			return true
		}
	}
	return false
}
