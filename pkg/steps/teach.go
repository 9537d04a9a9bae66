package steps

import (
	"fmt"
	"slices"
	"strings"

	suggestpkg "github.com/hilrun/hilrun/pkg/suggest"
)

// foreignNames are words people bring from pexpect, pyserial and other
// runners, each with hilrun's name for the same thing. A suggestion comes
// from here before it comes from spelling: "wait" is one letter nearer to
// halt than to delay, and suggesting halt would stop a core where the
// writer meant to pause.
var foreignNames = map[string]string{
	"wait":          "delay",
	"sleep":         "delay",
	"pause":         "delay",
	"baudrate":      "baud",
	"baud_rate":     "baud",
	"bytesize":      "data_bits",
	"databits":      "data_bits",
	"stopbits":      "stop_bits",
	"write":         "send",
	"sendline":      "send",
	"send_line":     "send",
	"writeline":     "send",
	"read_until":    "expect",
	"expect_exact":  "expect",
	"wait_for":      "expect",
	"waitfor":       "expect",
	"readline":      "expect",
	"eol":           "line_ending",
	"newline":       "line_ending",
	"line_end":      "line_ending",
	"line_endings":  "line_ending",
	"terminator":    "line_ending",
	"flowcontrol":   "flow_control",
	"rtscts":        "flow_control",
	"xonxoff":       "flow_control",
	"read_memory":   "mem_read",
	"write_memory":  "mem_write",
	"reset_halt":    "reset",
	"shell":         "exec",
	"run":           "exec",
	"loop":          "repeat",
	"expect_prompt": "wait_prompt",
}

// suggest returns ` (did you mean "x"?)` when got is another runner's
// word for one of the candidates, or one of them is spelt close to it, or
// "".
func suggest(got string, candidates []string) string {
	if best := foreignName(got, candidates); best != "" {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	best, d := suggestpkg.Nearest(got, candidates)
	limit := 2
	if len(got) <= 3 {
		limit = 1
	}
	if best != "" && (d <= limit || (len(got) >= 3 && strings.HasPrefix(best, got))) {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return ""
}

// foreignName is hilrun's name among candidates for got, another runner's
// word, or "".
func foreignName(got string, candidates []string) string {
	if to, ok := foreignNames[strings.ToLower(got)]; ok && slices.Contains(candidates, to) {
		return to
	}
	return ""
}

// unknownKindMsg says that got is no step kind. A suggestion comes from
// another runner's words or from a misspelling by one letter: a kind two
// letters away may do something else entirely, so those are only listed
// among the closest kinds, never suggested.
func unknownKindMsg(got string) string {
	keys := allStepKeys()
	msg := fmt.Sprintf("unknown step kind %q", got)
	if best := foreignName(got, keys); best != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", best)
	} else if best, d := suggestpkg.Nearest(got, keys); best != "" && d <= 1 {
		msg += fmt.Sprintf(" (did you mean %q?)", best)
	}
	return msg + "; the closest kinds are " + strings.Join(closestKinds(got, 4), ", ") + " (hilrun schema lists them all)"
}

// closestKinds returns the n step kinds spelt nearest to got, nearest
// first, ties in the order of StepKinds.
func closestKinds(got string, n int) []string {
	var kinds []string
	for _, k := range StepKinds() {
		name := string(k)
		if k == KindCamera {
			name = "expect_image"
		}
		kinds = append(kinds, name)
	}
	g := strings.ToLower(got)
	dist := func(k string) int {
		d := suggestpkg.Distance(g, k)
		if foreignNames[g] == k {
			d = -1
		}
		return d
	}
	slices.SortStableFunc(kinds, func(a, b string) int { return dist(a) - dist(b) })
	return kinds[:min(n, len(kinds))]
}

// lineEndingValue reads a line_ending value as people write it: the
// names in any case (CRLF), or the characters themselves ("\r\n").
func lineEndingValue(s string) (string, bool) {
	switch s {
	case "\r\n":
		return "crlf", true
	case "\n":
		return "lf", true
	case "\r":
		return "cr", true
	case "":
		return "none", true
	}
	l := strings.ToLower(s)
	return l, slices.Contains(LineEndings, l)
}

// exprHint adds a hint to the message of an expression that does not
// compile, for the mistakes people make coming from other languages.
func exprHint(src, msg string) string {
	if strings.Contains(msg, `Operator("=")`) {
		return msg + `: to compare, write == (a single = assigns nothing in an expression): ` + doubleEquals(src)
	}
	return msg
}

// doubleEquals returns src with its first lone = written ==.
func doubleEquals(src string) string {
	for i := 0; i < len(src); i++ {
		if src[i] != '=' {
			continue
		}
		if i > 0 && strings.ContainsRune("=!<>", rune(src[i-1])) || i+1 < len(src) && src[i+1] == '=' {
			continue
		}
		return src[:i] + "==" + src[i+1:]
	}
	return src
}
