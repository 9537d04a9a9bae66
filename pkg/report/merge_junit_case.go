package report

import (
	"encoding/xml"
	"slices"
	"strings"

	"github.com/jstemmer/go-junit-report/v2/junit"
)

// mergeSuite is a testsuite as MergeJUnit copies it: junit.Testsuite,
// with testcases that keep what hilrun writes beyond go-junit-report's
// model (measuredCase): a measured case's properties and the
// flakyFailure, flakyError, rerunFailure and rerunError elements of a
// retried one. Decoding into junit.Testsuite would drop both.
type mergeSuite struct {
	Name     string `xml:"name,attr"`
	Tests    int    `xml:"tests,attr"`
	Failures int    `xml:"failures,attr"`
	Errors   int    `xml:"errors,attr"`
	ID       int    `xml:"id,attr"`

	Disabled  int    `xml:"disabled,attr,omitempty"`
	Hostname  string `xml:"hostname,attr,omitempty"`
	Package   string `xml:"package,attr,omitempty"`
	Skipped   int    `xml:"skipped,attr,omitempty"`
	Time      string `xml:"time,attr"`
	Timestamp string `xml:"timestamp,attr,omitempty"`
	File      string `xml:"file,attr,omitempty"`

	Properties *[]junit.Property `xml:"properties>property,omitempty"`
	Testcases  []measuredCase    `xml:"testcase,omitempty"`
	SystemOut  *junit.Output     `xml:"system-out,omitempty"`
	SystemErr  *junit.Output     `xml:"system-err,omitempty"`
}

// rerunNames are the elements of earlier attempts a testcase may hold.
var rerunNames = []string{"flakyFailure", "flakyError", "rerunFailure", "rerunError"}

// keepReruns leaves in each testcase only the elements of earlier
// attempts: the catch-all field that reads them reads any other element
// too.
func (s *mergeSuite) keepReruns() {
	for i := range s.Testcases {
		tc := &s.Testcases[i]
		tc.Reruns = slices.DeleteFunc(tc.Reruns, func(r rerunElem) bool { return !slices.Contains(rerunNames, r.XMLName.Local) })
		if len(tc.Reruns) == 0 {
			tc.Reruns = nil
		}
	}
}

// UnmarshalXML reads an element of an earlier attempt back as the JUnit
// writer wrote it. Its text is mixed with a system-out element, so the
// text read holds the writer's indentation too: the newline and tabs
// before the first child, and the white space after it, are dropped, so
// that a merged report says what the shard's did.
func (r *rerunElem) UnmarshalXML(d *xml.Decoder, start xml.StartElement) error {
	r.XMLName = start.Name
	for _, a := range start.Attr {
		switch a.Name.Local {
		case "message":
			r.Message = a.Value
		case "type":
			r.Type = a.Value
		}
	}
	var text strings.Builder
	children := false
	for {
		tok, err := d.Token()
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.CharData:
			if !children {
				text.Write(t)
			}
		case xml.StartElement:
			if !children {
				s := strings.TrimSuffix(strings.TrimRight(text.String(), "\t"), "\n")
				text.Reset()
				text.WriteString(s)
				children = true
			}
			if t.Name.Local != "system-out" {
				if err := d.Skip(); err != nil {
					return err
				}
				continue
			}
			if err := d.DecodeElement(&r.SystemOut, &t); err != nil {
				return err
			}
		case xml.EndElement:
			r.Data = text.String()
			return nil
		}
	}
}
