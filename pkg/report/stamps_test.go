package report

import (
	"bytes"
	"encoding/json"
	"regexp"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/runner"
)

// TestHTMLTimesToTheMillisecond: every wall-clock time the HTML report
// shows has three decimals, even a whole second.
func TestHTMLTimesToTheMillisecond(t *testing.T) {
	at := time.Date(2025, 3, 14, 9, 26, 53, 250_400_000, time.UTC)
	events := eventFile(t, []runner.SequenceResult{{Name: "s", File: "s.yaml", Status: runner.Passed, StartedAt: at}})
	info := RunInfo{Started: at.Add(-time.Second)}
	var page bytes.Buffer
	now := func() time.Time { return time.Date(2025, 3, 14, 10, 0, 0, 0, time.UTC) }
	if err := WriteHTML(&page, events, HTMLOptions{Files: files.Anywhere(), Info: info, Now: now}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Generated string
		Info      struct{ Started string }
		Sequences []struct {
			StartedAt string `json:"started_at"`
		}
	}
	if err := json.Unmarshal(htmlPageData(t, page.Bytes()), &doc); err != nil || len(doc.Sequences) != 1 {
		t.Fatalf("the page's data: %v", err)
	}
	tests := []struct{ name, got, want string }{
		{"report made", doc.Generated, "2025-03-14T10:00:00.000Z"},
		{"run started", doc.Info.Started, "2025-03-14T09:26:52.250Z"},
		{"sequence started", doc.Sequences[0].StartedAt, "2025-03-14T09:26:53.250Z"},
	}
	ms := regexp.MustCompile(`\.\d{3}Z$`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want || !ms.MatchString(tt.got) {
				t.Errorf("shows %q, want %q", tt.got, tt.want)
			}
		})
	}
}
