package steps

import (
	"strings"
	"testing"
)

func TestCheckPortURL(t *testing.T) {
	for _, tc := range []struct {
		name, port, err string
		network         bool
	}{
		{"device", "/dev/ttyACM0", "", false},
		{"raw", "tcp://lab1:3001", "", true},
		{"rfc2217", "rfc2217://10.0.0.7:2000", "", true},
		{"upper case scheme", "RFC2217://lab1:2000", "", true},
		{"ipv6", "tcp://[::1]:2000", "", true},
		{"unknown scheme", "ftp://lab1:21", `unknown scheme "ftp"`, false},
		{"no port", "tcp://lab1", "want tcp://HOST:PORT", true},
		{"no host", "rfc2217://:2000", "no host", true},
		{"port out of range", "tcp://lab1:70000", "not a number from 1 to 65535", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckPortURL(tc.port)
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("CheckPortURL(%q) = %v, want error containing %q", tc.port, err, tc.err)
			}
			if got := NetworkPort(tc.port); got != tc.network {
				t.Errorf("NetworkPort(%q) = %v, want %v", tc.port, got, tc.network)
			}
		})
	}
}
