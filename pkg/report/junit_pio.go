package report

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jstemmer/go-junit-report/v2/junit"

	"github.com/hilrun/hilrun/pkg/results"
)

// pioTestKind is the kind of a pio_test step (steps.KindPIOTest).
const pioTestKind = "pio_test"

// maxTestCases bounds the pio_test cases one entry reports; the rest are
// counted in a last testcase's output.
const maxTestCases = 10000

// addTestCases turns the cases of a pio_test step (its data's "cases")
// into testcases named after the step, the suite and the case.
func (cb *caseBuilder) addTestCases(st *results.Step) {
	list, _ := st.Data["cases"].([]any)
	if len(list) == 0 {
		return
	}
	cb.pioOnly = st.Path == results.TopKey(st.Path)
	prefix := stepCaseName(st, cb.seq)
	if st.Group != "" {
		prefix = entryIndex(results.TopKey(st.Path), cb.seq) + " " + cleanLine(st.Group) + " " + prefix
	}
	width := len(strconv.Itoa(len(list)))
	for k, x := range list {
		m, _ := x.(map[string]any)
		if m == nil {
			continue
		}
		if len(cb.pioCases) >= maxTestCases {
			cb.moreCases++
			continue
		}
		str := func(k string) string { v, _ := m[k].(string); return cleanLine(v) }
		ms, line := num(m["duration_ms"]), num(m["line"])
		name := fmt.Sprintf("%s: %0*d %s/%s", prefix, width, k+1, str("suite"), str("name"))
		tc := &junit.Testcase{Name: name, Classname: cleanLine(cb.seq.seq.Name),
			Time: seconds(time.Duration(ms * float64(time.Millisecond)))}
		msg := str("message")
		where := str("file")
		if where != "" {
			where = fmt.Sprintf("%s:%d", where, int(line))
		}
		switch str("status") {
		case "FAILED":
			tc.Failure = &junit.Result{Message: first(msg, "failed"), Type: typeFailed, Data: strings.TrimSpace(where+": "+msg) + "\n"}
		case "ERRORED":
			tc.Error = &junit.Result{Message: first(msg, "errored"), Type: typeError, Data: strings.TrimSpace(where+": "+msg) + "\n"}
		case "SKIPPED":
			tc.Skipped = &junit.Result{Message: first(msg, "skipped")}
		}
		cb.pioCases = append(cb.pioCases, tc)
	}
}

// num is a number of a step's data, however the event file decoded it.
func num(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case json.Number:
		f, _ := x.Float64()
		return f
	}
	return 0
}

func first(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
