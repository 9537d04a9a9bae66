package runner

import "testing"

// lossy tells an echo that lost characters from a line that is no echo.
func TestLossy(t *testing.T) {
	for _, tc := range []struct {
		name, line, text string
		want             bool
	}{
		{"first key lost", "rc32 0x40200000 8", "crc32 0x40200000 8", true},
		{"after a late prompt", "=> rc32 0x40200000 8", "crc32 0x40200000 8", true},
		{"a key lost inside", "md.l 0x4020000 2", "md.l 0x40200000 2", true},
		{"whole", "crc32 0x40200000 8", "crc32 0x40200000 8", false},
		{"output of digits", "40200004: 00000000", "crc32 0x40200000 8", false},
		{"half lost", "0000 8", "crc32 0x40200000 8", false},
		{"empty line", "", "version", false},
		{"nothing sent", "anything", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, got := lossy(tc.line, tc.text); got != tc.want {
				t.Errorf("lossy(%q, %q) = %v, want %v", tc.line, tc.text, got, tc.want)
			}
		})
	}
}
