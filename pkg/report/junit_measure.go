package report

import (
	"encoding/xml"
	"strconv"

	"github.com/jstemmer/go-junit-report/v2/junit"

	"github.com/hilrun/hilrun/pkg/results"
)

// maxCaseProperties bounds the properties of one testcase; the
// --measurements CSV and the JSON report list every measurement.
const maxCaseProperties = 500

// measuredCase is a testcase with the properties its measurements give
// (junit.Testcase has none): properties first, as in a testsuite.
type measuredCase struct {
	XMLName    xml.Name          `xml:"testcase"`
	Name       string            `xml:"name,attr"`
	Classname  string            `xml:"classname,attr"`
	Time       string            `xml:"time,attr,omitempty"`
	Status     string            `xml:"status,attr,omitempty"`
	Properties *[]junit.Property `xml:"properties>property,omitempty"`
	Skipped    *junit.Result     `xml:"skipped,omitempty"`
	Error      *junit.Result     `xml:"error,omitempty"`
	Failure    *junit.Result     `xml:"failure,omitempty"`
	SystemOut  *junit.Output     `xml:"system-out,omitempty"`
	SystemErr  *junit.Output     `xml:"system-err,omitempty"`
	// Reruns are the elements of the attempts before the last, each
	// named by its XMLName; ",any" lets MergeJUnit read them back.
	Reruns []rerunElem `xml:",any"`
}

// measureProps adds the properties of st's measurement to the case: NAME
// (the value), NAME.unit, NAME.outcome; for a repeat, each measurement's
// NAME.count, NAME.failed, NAME.min, NAME.median, NAME.p99 and NAME.max.
func (cb *caseBuilder) measureProps(st *results.Step) {
	if m := st.Measurement; m != nil {
		cb.prop(m.Name, csvScalar(m.Value))
		if m.Unit != "" {
			cb.prop(m.Name+".unit", cleanLine(m.Unit))
		}
		cb.prop(m.Name+".outcome", string(m.Outcome))
	}
	if st.Repeat == nil {
		return
	}
	for i := range st.Repeat.Measurements {
		s := &st.Repeat.Measurements[i]
		cb.prop(s.Name+".count", strconv.Itoa(s.Count))
		cb.prop(s.Name+".failed", strconv.Itoa(s.Failed))
		for _, q := range []struct {
			k string
			v *float64
		}{{"min", s.Min}, {"median", s.Median}, {"p99", s.P99}, {"max", s.Max}} {
			if q.v != nil {
				cb.prop(s.Name+"."+q.k, strconv.FormatFloat(*q.v, 'g', -1, 64))
			}
		}
		if s.Unit != "" {
			cb.prop(s.Name+".unit", cleanLine(s.Unit))
		}
	}
}

func (cb *caseBuilder) prop(name, value string) {
	if len(cb.props) < maxCaseProperties {
		cb.props = append(cb.props, junit.Property{Name: noAttachments(cleanLine(name)), Value: noAttachments(value)})
	}
}

// emitCase emits tc, with the case's properties when it has any.
func (cb *caseBuilder) emitCase(tc *junit.Testcase) {
	if len(cb.props) == 0 || cb.emitMeasured == nil {
		cb.emit(tc)
		return
	}
	safeCase(tc)
	props := cb.props
	cb.emitMeasured(&measuredCase{Name: tc.Name, Classname: tc.Classname, Time: tc.Time, Status: tc.Status, Properties: &props,
		Skipped: tc.Skipped, Error: tc.Error, Failure: tc.Failure, SystemOut: tc.SystemOut, SystemErr: tc.SystemErr})
}

// encodeMeasured writes a testcase with measurements, with the elements
// of its earlier attempts when the case was retried, as encodeCase does
// for one without.
func (jw *junitWriter) encodeMeasured(tc *measuredCase, earlier []attemptProblem) {
	if sr := jw.retries; sr != nil {
		earlier = append(sr.byName[tc.Name], earlier...)
	}
	if len(earlier) > 0 {
		tc.Reruns = rerunElems(earlier, tc.Failure == nil && tc.Error == nil && tc.Skipped == nil)
	}
	jw.encode(tc, "testcase")
}
