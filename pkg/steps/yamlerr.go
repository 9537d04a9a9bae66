package steps

import (
	"bytes"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// yamlErrorAt finds the column of a YAML parser error that names only its
// line, and words the message for the reader. The parser (gopkg.in/yaml.v3)
// reports "line N" without a column; pointing at column 1 sends the reader
// to the wrong place on a line whose indentation is off.
func yamlErrorAt(data []byte, line int, msg string) (ln, col int, out string) {
	if strings.Contains(msg, "did not find expected") {
		// The parser names the line where the block it was reading began;
		// the line that broke it is the first whose prefix of the file no
		// longer parses.
		line = max(line, firstBadLine(data))
	}
	ln = line
	text := lineOf(data, line)
	indent := len(text) - len(strings.TrimLeft(text, " "))
	col = indent + 1
	switch {
	case strings.Contains(text, "\t") && (strings.Contains(msg, "cannot start any token") || strings.Contains(msg, "tab")):
		return ln, strings.IndexByte(text, '\t') + 1, "a tab character: YAML indents with spaces only (replace the tab with spaces)"
	case strings.Contains(msg, "mapping values are not allowed"):
		if c := secondColon(text); c > 0 {
			return ln, c, msg + " (a second key: value on one line; quote the value if the colon is part of it)"
		}
		return ln, col, msg + " (is this line indented differently from the keys beside it?)"
	case strings.Contains(msg, "did not find expected key") || strings.Contains(msg, "did not find expected '-'"):
		return ln, col, msg + " (check this line's indentation against the lines above it)"
	}
	return ln, col, msg
}

// firstBadLine returns the first line n such that lines 1..n of data do
// not parse as YAML, or 0. It parses O(log lines) prefixes, and only for a
// file that failed already.
func firstBadLine(data []byte) int {
	lines := bytes.SplitAfter(data, []byte("\n"))
	fails := func(n int) bool {
		var v yaml.Node
		return yaml.Unmarshal(bytes.Join(lines[:n], nil), &v) != nil
	}
	n := sort.Search(len(lines)+1, fails)
	if n > len(lines) {
		return 0
	}
	return n
}

// lineOf returns line n (from 1) of data without its line break, or "".
func lineOf(data []byte, n int) string {
	for i := 1; i < n; i++ {
		j := bytes.IndexByte(data, '\n')
		if j < 0 {
			return ""
		}
		data = data[j+1:]
	}
	if j := bytes.IndexByte(data, '\n'); j >= 0 {
		data = data[:j]
	}
	return strings.TrimRight(string(data), "\r")
}

// secondColon returns the column of the colon of a second "key: value" on
// a line that already has one, outside quotes, or 0.
func secondColon(text string) int {
	seen := 0
	var quote byte
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '#' && (i == 0 || text[i-1] == ' '):
			return 0
		case c == ':' && (i+1 == len(text) || text[i+1] == ' '):
			seen++
			if seen == 2 {
				return i + 1
			}
		}
	}
	return 0
}
