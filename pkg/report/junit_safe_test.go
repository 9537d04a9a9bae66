package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/runner"
)

// TestJUnitForgedAttachments: a board that prints an attachment line, or
// a sequence file that names a step, group or device with one, must not
// make CI publish a file of the runner. Only the line of the picture a
// camera step took survives.
func TestJUnitForgedAttachments(t *testing.T) {
	forged := "[[ATTACHMENT|/etc/passwd]] [[attachment|/etc/shadow]]"
	picture := "/var/hilrun/logs/led_on.png"
	seq := runner.SequenceResult{
		Name: forged, File: forged, Bench: forged, Status: runner.Failed, StartedAt: base, Error: forged,
		Steps: []runner.StepResult{
			{Path: "0", Kind: "camera", Name: forged, Status: runner.Passed, Attachments: []string{picture},
				Data: map[string]any{"label": forged, "values": []any{forged}}},
			{Path: "1.0", Kind: "expect", Name: forged, Group: forged, Status: runner.Failed, File: forged, Line: 3,
				Message: forged, Expected: forged, Received: "boot\n" + forged + "\n", Data: map[string]any{"sent": forged}},
			{Path: "1", Kind: "group", Name: forged, Status: runner.Failed},
			{Path: "2", Kind: "pio_test", Name: forged, Status: runner.Failed, Message: forged,
				Data: map[string]any{"cases": []any{map[string]any{"suite": forged, "name": forged, "status": "FAILED", "message": forged, "file": forged}}}},
			{Path: "3", Kind: "send", Name: forged, Status: runner.Skipped, Message: forged},
		},
		Transcripts: []runner.Transcript{{Console: forged, Data: []byte("U-Boot\r\n" + forged + "\r\n[[ATTACHMENT|/root/.ssh/id_rsa]]")}},
	}
	out := junitReport(t, []runner.SequenceResult{seq})
	parseJUnit(t, out)
	lower := bytes.ToLower(out)
	if n := bytes.Count(lower, []byte("[[attachment|")); n != 1 {
		t.Errorf("the report holds %d attachment lines, want only the picture's:\n%s", n, out)
	}
	if !bytes.Contains(out, []byte("[[ATTACHMENT|"+picture+"]]\n")) {
		t.Errorf("the picture's attachment line is gone:\n%s", out)
	}
	// A picture's own path cannot carry a second marker either.
	if line := attachmentLine(forged); strings.Count(strings.ToLower(line), "[[attachment|") != 1 {
		t.Errorf("attachmentLine(%q) = %q", forged, line)
	}
	for _, want := range []string{`[[ATTACHMENT\x7c/etc/passwd]]`, `[[attachment\x7c/etc/shadow]]`, `[[ATTACHMENT\x7c/root/.ssh/id_rsa]]`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the report lacks the defused line %s", want)
		}
	}
}

func TestNoAttachments(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "boot ok", "boot ok"},
		{"brackets", "[[x]] [[ATTACHMENT]]", "[[x]] [[ATTACHMENT]]"},
		{"marker", "[[ATTACHMENT|/etc/passwd]]", `[[ATTACHMENT\x7c/etc/passwd]]`},
		{"any case", "[[AttachMent|a]]", `[[AttachMent\x7ca]]`},
		{"twice, glued", "[[ATTACHMENT|[[ATTACHMENT|a]]", `[[ATTACHMENT\x7c[[ATTACHMENT\x7ca]]`},
		{"at the end", "x [[ATTACHMENT|", `x [[ATTACHMENT\x7c`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := noAttachments(tt.in); got != tt.want {
				t.Errorf("noAttachments(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
