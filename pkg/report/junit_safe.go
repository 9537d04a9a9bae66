package report

import (
	"encoding/xml"
	"strings"

	"github.com/jstemmer/go-junit-report/v2/junit"
)

// attachmentMarker starts the lines that Jenkins' JUnit attachments
// plugin and GitLab read in a report's output as files to publish with
// the test case.
const attachmentMarker = "[[ATTACHMENT|"

// attachmentLine is the line that makes CI publish the picture at path:
// the one kind of line in a JUnit report that may carry the marker.
func attachmentLine(path string) string {
	return attachmentMarker + noAttachments(cleanLine(path)) + "]]"
}

// noAttachments defuses every attachment marker in s, in any case, by
// writing its bar as the escape \x7c. Text from a device, a sequence file
// or an error would otherwise make CI publish any file of the runner it
// names (a board printing "[[ATTACHMENT|/etc/passwd]]").
func noAttachments(s string) string {
	if !strings.Contains(s, "[[") {
		return s
	}
	var b strings.Builder
	for {
		i := indexFold(s, attachmentMarker)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		bar := i + len(attachmentMarker) - 1
		b.WriteString(s[:bar])
		b.WriteString(`\x7c`)
		s = s[bar+1:]
	}
}

// indexFold is strings.Index for an ASCII pattern, ignoring ASCII case.
func indexFold(s, pattern string) int {
	for i := 0; i+len(pattern) <= len(s); i++ {
		if asciiEqualFold(s[i:i+len(pattern)], pattern) {
			return i
		}
	}
	return -1
}

func asciiEqualFold(a, b string) bool {
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// safeAttrs defuses attachment markers in the values of attrs.
func safeAttrs(attrs []xml.Attr) {
	for i := range attrs {
		attrs[i].Value = noAttachments(attrs[i].Value)
	}
}

// safeCase defuses attachment markers in everything tc says but its
// system-out, which the case builder assembles from lines it defused
// itself and hilrun's own attachment lines.
func safeCase(tc *junit.Testcase) {
	tc.Name = noAttachments(tc.Name)
	tc.Classname = noAttachments(tc.Classname)
	for _, r := range []*junit.Result{tc.Skipped, tc.Error, tc.Failure} {
		if r != nil {
			r.Message = noAttachments(r.Message)
			r.Type = noAttachments(r.Type)
			r.Data = noAttachments(r.Data)
		}
	}
	if tc.SystemErr != nil {
		tc.SystemErr.Data = noAttachments(tc.SystemErr.Data)
	}
}
