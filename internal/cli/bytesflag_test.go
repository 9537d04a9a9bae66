package cli

import (
	"strings"
	"testing"
)

func TestParseBytes(t *testing.T) {
	tests := []struct {
		in   string
		want int
		err  string
	}{
		{"1048576", 1 << 20, ""},
		{"512KiB", 512 << 10, ""},
		{"4MiB", 4 << 20, ""},
		{"4M", 4 << 20, ""},
		{"1GiB", 1 << 30, ""},
		{"100B", 100, ""},
		{"0", 0, `"0" is not a size`},
		{"-1", 0, `"-1" is not a size`},
		{"lots", 0, `"lots" is not a size`},
		{"2GiB", 0, `"2GiB" is more than the largest size accepted, 1GiB`},
		{"99999999999999999999", 0, "is not a size"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseBytes(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got %d, %v; want an error containing %q", got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %d, %v; want %d", got, err, tt.want)
			}
		})
	}
}
