package suggest

import "testing"

func TestDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "abc", 0}, {"abc", "", 3}, {"sned", "send", 1},
		{"expct", "expect", 1}, {"kitten", "sitting", 3}, {"steps", "stepz", 1},
	} {
		if got := Distance(tt.a, tt.b); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestNearest(t *testing.T) {
	if got, d := Nearest("Countr", []string{"blink", "counter", "config"}); got != "counter" || d != 1 {
		t.Errorf("Nearest = %q, %d", got, d)
	}
	if got, d := Nearest("x", nil); got != "" || d != -1 {
		t.Errorf("Nearest of nothing = %q, %d", got, d)
	}
}
