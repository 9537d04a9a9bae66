package report

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/runner"
)

// A matrix case's tags and values reach JUnit as properties of its
// testcase and Allure as "tag" labels and parameters.
func TestJUnitAndAllureCaseTags(t *testing.T) {
	events := eventFile(t, []runner.SequenceResult{matrixRun()})
	var b bytes.Buffer
	if err := WriteJUnit(&b, events, JUnitOptions{}); err != nil {
		t.Fatal(err)
	}
	xml := strings.NewReplacer("\n", "", "\t", "").Replace(b.String())
	for _, want := range []string{
		`<property name="tags" value="slow,hw"></property>`,
		`<property name="param.fw" value="2.5.0"></property><property name="param.baud" value="115200"></property>`,
		`<property name="param.fw" value="2.4.1"></property><property name="param.baud" value="9600"></property>`,
	} {
		if !strings.Contains(xml, want) {
			t.Errorf("JUnit lacks %s:\n%s", want, xml)
		}
	}

	out := filepath.Join(t.TempDir(), "allure-results")
	if err := WriteAllure(context.Background(), out, events, AllureOptions{Files: files.Anywhere()}); err != nil {
		t.Fatal(err)
	}
	res, _ := readAllure(t, out)
	var cases []string
	for _, raw := range res {
		var r allureResult
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		var tags, params []string
		for _, l := range r.Labels {
			if l.Name == "tag" {
				tags = append(tags, l.Value)
			}
		}
		for _, p := range r.Parameters {
			if p.Name == "fw" || p.Name == "baud" {
				params = append(params, p.Name+"="+p.Value)
			}
		}
		if len(params) > 0 {
			cases = append(cases, strings.Join(tags, ",")+" "+strings.Join(params, ","))
		}
	}
	slices.Sort(cases)
	want := []string{"slow,hw fw=2.4.1,baud=115200", "slow,hw fw=2.4.1,baud=9600", "slow,hw fw=2.5.0,baud=115200", "slow,hw fw=2.5.0,baud=9600"}
	if !slices.Equal(cases, want) {
		t.Errorf("Allure cases %q, want %q", cases, want)
	}
}
