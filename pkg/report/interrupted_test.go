package report

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

// TestInterruptedInEveryReport interrupts a real run during a step: the
// console, JSON, HTML and Allure reports all read INTERRUPTED, and the
// sequence's error names the interrupt first, not the finally step that
// failed after it.
func TestInterruptedInEveryReport(t *testing.T) {
	seq, err := steps.Parse("seq/stopped.yaml", []byte(interruptSeq), steps.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out bytes.Buffer
	con := NewConsole(&out, ConsoleOptions{})
	sink := runner.SinkFunc(func(e runner.Event) {
		con.Event(e)
		if e.Type == runner.StepStarted && e.Step != nil && e.Step.Path == "1" {
			cancel()
		}
	})
	res := runner.Run(ctx, seq, runner.Bench{}, runner.Options{
		KeepSteps: true,
		Sink:      sink,
	})
	con.Summary([]runner.SequenceResult{*res})
	events := eventFile(t, []runner.SequenceResult{*res})

	var js bytes.Buffer
	if err := WriteJSON(&js, events, results.Options{}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Interrupted bool
		Sequences   []struct {
			Interrupted bool
			Error       string
		}
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := WriteHTML(&page, events, HTMLOptions{Files: files.Anywhere(), Info: htmlInfo, Now: htmlNow}); err != nil {
		t.Fatal(err)
	}
	var hd struct {
		Interrupted bool
		Sequences   []struct{ Interrupted bool }
	}
	if err := json.Unmarshal(htmlPageData(t, page.Bytes()), &hd); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "allure")
	if err := WriteAllure(context.Background(), dir, events, AllureOptions{Files: files.Anywhere()}); err != nil {
		t.Fatal(err)
	}
	allure, _ := readAllure(t, dir)
	var allureSays string
	for _, b := range allure {
		var r allureResult
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		if r.Name == interruptedCaseName && r.StatusDetails != nil {
			allureSays = r.StatusDetails.Message
		}
	}

	tests := []struct {
		name string
		ok   bool
		got  any
	}{
		{"console sequence line", strings.Contains(out.String(), "INTERRUPTED stopped: interrupted ("), out.String()},
		{"console run line", strings.Contains(out.String(), "\nINTERRUPTED 1 sequence"), out.String()},
		{"json document", doc.Interrupted, js.String()},
		{"json sequence", len(doc.Sequences) == 1 && doc.Sequences[0].Interrupted, js.String()},
		{"json error names the interrupt first", len(doc.Sequences) == 1 && strings.HasPrefix(doc.Sequences[0].Error, "interrupted"), doc.Sequences},
		{"html title", bytes.Contains(page.Bytes(), []byte("<title>INTERRUPTED stopped")), "the page's title"},
		{"html data", hd.Interrupted && len(hd.Sequences) == 1 && hd.Sequences[0].Interrupted, hd},
		{"allure", strings.HasPrefix(allureSays, "INTERRUPTED: interrupted"), allureSays},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !tt.ok {
				t.Errorf("does not read INTERRUPTED:\n%v", tt.got)
			}
		})
	}
}
