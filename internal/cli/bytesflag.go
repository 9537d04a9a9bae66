package cli

import (
	"fmt"
	"strconv"
	"strings"
)

// bytesFlag is a size in bytes written as a number with an optional
// binary unit: 1048576, 512KiB, 4MiB, 1GiB (K, M and G mean the same).
type bytesFlag struct{ n *int }

func (b bytesFlag) String() string {
	if b.n == nil || *b.n == 0 {
		return ""
	}
	return strconv.Itoa(*b.n)
}

func (b bytesFlag) Type() string { return "BYTES" }

func (b bytesFlag) Set(s string) error {
	n, err := parseBytes(s)
	if err != nil {
		return err
	}
	*b.n = n
	return nil
}

// rateFlag is a bytesFlag that may be 0, which turns a rate limit off.
type rateFlag struct{ bytesFlag }

func (r rateFlag) Set(s string) error {
	if strings.TrimSpace(s) == "0" {
		*r.n = 0
		return nil
	}
	return r.bytesFlag.Set(s)
}

func (r rateFlag) String() string {
	if r.n != nil && *r.n == 0 {
		return "0"
	}
	return r.bytesFlag.String()
}

// maxBytesFlag bounds what a size flag may say: 1 GiB.
const maxBytesFlag = 1 << 30

func parseBytes(s string) (int, error) {
	t := strings.TrimSpace(s)
	mult := 1
	for _, u := range []struct {
		suffix string
		mult   int
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}} {
		if rest, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = strings.TrimSpace(rest), u.mult
			break
		}
	}
	n, err := strconv.ParseUint(t, 10, 64)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("%q is not a size: expected a number of bytes above 0, like 1048576, 512KiB or 4MiB", s)
	}
	if n > maxBytesFlag/uint64(mult) {
		return 0, fmt.Errorf("%q is more than the largest size accepted, 1GiB", s)
	}
	return int(n) * mult, nil
}
