package report

import (
	"strings"

	"github.com/hilrun/hilrun/pkg/results"
)

// finallyPrefix starts the path of a finally step ("finally.0").
const finallyPrefix = "finally."

// The type of a JUnit failure or error: junit-10 readers and Surefire's
// want one on each.
const (
	typeFailed      = "failed"
	typeError       = "error"
	typeInterrupted = "interrupted"
)

// padPath zero-pads the top-level index that starts path, to seq.width
// digits ("3.1" -> "03.1") or, for a finally step, to seq.finallyWidth
// ("finally.3" -> "finally.03" when there are ten or more), so that
// testcase names sort in the order the steps ran.
func padPath(path string, seq *seqSummary) string {
	if rest, ok := strings.CutPrefix(path, finallyPrefix); ok {
		return finallyPrefix + padDigits(rest, seq.finallyWidth)
	}
	return padDigits(path, seq.width)
}

func padDigits(s string, width int) string {
	if n := leadingDigits(s); n > 0 && n < width {
		return strings.Repeat("0", width-n) + s
	}
	return s
}

// entryIndex is the padded index of the top-level entry key
// (results.TopKey) that starts the name of each of its testcases.
func entryIndex(key string, seq *seqSummary) string {
	return cleanLine(padPath(results.TopKey(key), seq))
}
