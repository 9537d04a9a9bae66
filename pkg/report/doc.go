// Package report turns hilrun's results into something people and CI systems
// read: a live console report fed by the runner's event stream, and a JUnit
// XML file, a JSON document, a self-contained HTML page and Allure results,
// all written from the run's event stream (package results) by its one
// summary rule.
//
// Everything a device printed is untrusted: it may hold escape sequences,
// NUL bytes or invalid UTF-8. Every reporter escapes such bytes as text
// (\x1b, \xff) so that a terminal is never reprogrammed by a board and a
// report file always parses. Nor can it make CI publish a file of the
// runner: in the JUnit report only hilrun's own picture lines carry the
// [[ATTACHMENT|...]] marker that CI servers act on.
package report

import "github.com/hilrun/hilrun/pkg/results"

// Short names for the escapes every reporter uses.
var (
	cleanLine = results.CleanLine
	cleanText = results.CleanText
)
