package selectx_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/selectx"
)

func TestMarkerMatches(t *testing.T) {
	tests := []struct {
		name, expr string
		tags       []string
		want       bool
	}{
		{"a tag it has", "smoke", []string{"smoke"}, true},
		{"a tag it lacks", "smoke", []string{"slow"}, false},
		{"and", "smoke and slow", []string{"smoke", "slow"}, true},
		{"and, one missing", "smoke and slow", []string{"smoke"}, false},
		{"and not", "smoke and not slow", []string{"smoke"}, true},
		{"and not, excluded", "smoke and not slow", []string{"smoke", "slow"}, false},
		{"or", "smoke or slow", []string{"slow"}, true},
		{"not binds tighter than and", "not smoke and slow", []string{"slow"}, true},
		{"and binds tighter than or", "a or b and c", []string{"a"}, true},
		{"parentheses", "(a or b) and c", []string{"a"}, false},
		{"nested parentheses", "((a)) and (not (b or c))", []string{"a"}, true},
		{"no tags", "not needs-camera", nil, true},
		{"hyphens and dots", "needs-camera or fw.2", []string{"fw.2"}, true},
		{"double not", "not not smoke", []string{"smoke"}, true},
		{"case counts", "Smoke", []string{"smoke"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := selectx.ParseMarker(tt.expr)
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Match(tt.tags); got != tt.want {
				t.Errorf("%q on %v = %v, want %v", tt.expr, tt.tags, got, tt.want)
			}
		})
	}
}

func TestMarkerErrorsNameTheColumn(t *testing.T) {
	tests := []struct {
		name, expr string
		col        int
		says       string
	}{
		{"empty", "", 1, "empty"},
		{"blank", "   ", 1, "empty"},
		{"ends after and", "smoke and", 10, "ends too early"},
		{"starts with or", "or smoke", 1, `unexpected "or"`},
		{"two tags", "smoke slow", 7, `unexpected "slow"`},
		{"unclosed", "(smoke or slow", 15, "( at column 1 is not closed"},
		{"stray close", "smoke)", 6, `unexpected ")"`},
		{"bad character", "smoke && slow", 7, `unexpected '&'`},
		{"empty parentheses", "()", 2, `unexpected ")"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := selectx.ParseMarker(tt.expr)
			var se *selectx.SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("ParseMarker(%q) = %v, want a SyntaxError", tt.expr, err)
			}
			if se.Col != tt.col || !strings.Contains(se.Msg, tt.says) {
				t.Errorf("ParseMarker(%q): column %d %q, want column %d saying %q", tt.expr, se.Col, se.Msg, tt.col, tt.says)
			}
			if !strings.HasPrefix(err.Error(), "-m:1:") {
				t.Errorf("error %q does not start with -m:1:COL", err)
			}
		})
	}
}

func TestMarkerBounds(t *testing.T) {
	if _, err := selectx.ParseMarker(strings.Repeat("not ", 200) + "a"); err == nil || !strings.Contains(err.Error(), "nests deeper") {
		t.Errorf("deep nots: %v, want the nesting limit", err)
	}
	if _, err := selectx.ParseMarker(strings.Repeat("a or ", 1000) + "a"); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("long expression: %v, want the size limit", err)
	}
}

// FuzzParseMarker checks that any input parses or fails with a column
// inside it, never panics, and that an expression that parses means the
// same with extra parentheses around it.
func FuzzParseMarker(f *testing.F) {
	for _, s := range []string{"smoke", "smoke and not slow", "(a or b) and not (c)", "not", "((", "a b", "needs-camera"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := selectx.ParseMarker(s)
		if err != nil {
			var se *selectx.SyntaxError
			if !errors.As(err, &se) || se.Col < 1 {
				t.Fatalf("ParseMarker(%q) = %v, want a SyntaxError with a column", s, err)
			}
			return
		}
		w, err := selectx.ParseMarker("(" + s + ")")
		if err != nil {
			t.Fatalf("(%s) does not parse though %s does: %v", s, s, err)
		}
		for _, tags := range [][]string{nil, {"a"}, {"smoke", "slow"}, {"b", "c"}} {
			if m.Match(tags) != w.Match(tags) {
				t.Fatalf("%q and (%q) differ on %v", s, s, tags)
			}
		}
	})
}
