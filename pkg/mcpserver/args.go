package mcpserver

import (
	"fmt"
	"strings"
	"time"

	"github.com/hilrun/hilrun/pkg/stream"
)

// maxLockWait bounds lock_timeout_ms: a wait for a port or probe that
// another call holds.
const maxLockWait = time.Hour

// lockWait is the lock_timeout_ms argument as a duration, at most
// maxLockWait (a longer wait is only a longer "up to").
func lockWait(ms *int64) time.Duration {
	if ms == nil || *ms <= 0 {
		return 0
	}
	if *ms >= int64(maxLockWait/time.Millisecond) {
		return maxLockWait
	}
	return time.Duration(*ms) * time.Millisecond
}

// msArg is a client's millisecond argument name as a duration: from 0 to
// max, else an error naming it, so that no value wraps around into another
// (18446744073710 ms is not half a millisecond).
func msArg(name string, ms int64, max time.Duration) (time.Duration, error) {
	if ms < 0 || ms > int64(max/time.Millisecond) {
		return 0, fmt.Errorf("%s must be from 0 to %d (%v), found %d", name, int64(max/time.Millisecond), max, ms)
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// encodeBytes renders data for a client: utf8 (invalid bytes become
// U+FFFD), hex (space-separated pairs) or base64.
func encodeBytes(data []byte, encoding string) (string, error) {
	switch strings.ToLower(encoding) {
	case "", "utf8", "utf-8", "text":
		return strings.ToValidUTF8(string(data), "\uFFFD"), nil
	case "hex":
		var sb strings.Builder
		for i, c := range data {
			if i > 0 {
				sb.WriteByte(' ')
			}
			fmt.Fprintf(&sb, "%02x", c)
		}
		return sb.String(), nil
	case "base64":
		return base64Std(data), nil
	}
	return "", fmt.Errorf("encoding %q: want utf8, hex or base64", encoding)
}

// printable is data as one line for text summaries.
func printable(data []byte) string { return stream.Printable(data) }
