package redact

import (
	"strings"
	"testing"
)

func mustSet(t *testing.T, secrets ...Secret) *Set {
	t.Helper()
	s, err := New(secrets)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestNewRefusesShortAndTwice(t *testing.T) {
	for _, tc := range []struct {
		name    string
		secrets []Secret
		want    string
	}{
		{"short", []Secret{{"pin", "12345"}}, "secret pin is 5 bytes long, shorter than the 6 bytes"},
		{"twice", []Secret{{"a", "abcdefg"}, {"a", "hijklmn"}}, "secret a is given twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.secrets)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New: %v, want %q", err, tc.want)
			}
		})
	}
}

func TestStringAndMask(t *testing.T) {
	s := mustSet(t, Secret{"wifi_psk", "hunter22"}, Secret{"api_token", "tok-abcdef"})
	if got := s.String("psk=hunter22 token=tok-abcdef"); got != "psk=***wifi_psk*** token=***api_token***" {
		t.Errorf("String = %q", got)
	}
	if got := string(s.Mask([]byte("xhunter22y"))); got != "x********y" {
		t.Errorf("Mask = %q", got)
	}
	v := s.Value(map[string]any{"saved": []any{"hunter22", 3}, "n": 3})
	m := v.(map[string]any)
	if m["saved"].([]any)[0] != "***wifi_psk***" || m["n"] != 3 {
		t.Errorf("Value = %v", v)
	}
	var none *Set
	if none.String("hunter22") != "hunter22" || none.NewStream() != nil {
		t.Error("a nil Set redacts")
	}
}

// TestStreamSplit feeds a secret split at every place, and one byte at a
// time: what comes out is the text with the secret masked, of the same
// length.
func TestStreamSplit(t *testing.T) {
	s := mustSet(t, Secret{"wifi_psk", "hunter22"}, Secret{"other", "hunxyzzy"})
	in := "echo hunter22 and hun then hunxyzzy.\nhu"
	want := "echo ******** and hun then ********.\nhu"
	for cut := 0; cut <= len(in); cut++ {
		st := s.NewStream()
		got := string(st.Write([]byte(in[:cut]))) + string(st.Write([]byte(in[cut:]))) + string(st.Flush())
		if got != want {
			t.Fatalf("cut at %d: %q, want %q", cut, got, want)
		}
	}
	st := s.NewStream()
	var b strings.Builder
	for i := range len(in) {
		out := st.Write([]byte{in[i]})
		if st.Held() > len("hunter22")-1 {
			t.Fatalf("holds %d bytes", st.Held())
		}
		b.Write(out)
	}
	b.Write(st.Flush())
	if b.String() != want {
		t.Fatalf("byte by byte: %q, want %q", b.String(), want)
	}
}

// TestStreamAfterFlush masks the rest of a secret whose start was let out
// by a flush.
func TestStreamAfterFlush(t *testing.T) {
	s := mustSet(t, Secret{"wifi_psk", "hunter22"})
	st := s.NewStream()
	got := string(st.Write([]byte("x hunt"))) + string(st.Flush()) + string(st.Write([]byte("er22 y")))
	if strings.Contains(got, "er22") {
		t.Fatalf("got %q", got)
	}
}
