package steps

import (
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"strconv"
	"strings"
)

// A console's port is a device path or a network port URL: tcp://HOST:PORT
// (a raw socket carrying the serial bytes) or rfc2217://HOST:PORT (telnet
// with serial port control). The grammar lives here, with the model, so
// that loading, binding, the MCP policy and the consoles read one spelling.

// Network port schemes.
const (
	SchemeTCP     = "tcp"
	SchemeRFC2217 = "rfc2217"
)

// NetworkPort reports whether path is a network port URL (tcp:// or
// rfc2217://) rather than a device path.
func NetworkPort(path string) bool {
	scheme, _, ok := strings.Cut(path, "://")
	return ok && (strings.EqualFold(scheme, SchemeTCP) || strings.EqualFold(scheme, SchemeRFC2217))
}

// CheckPortURL returns nil when path is not a URL (a device path) or a
// valid network port URL, and otherwise says what is wrong with it:
// "ftp://x" names an unknown scheme, "tcp://host" lacks a port.
func CheckPortURL(path string) error {
	if !strings.Contains(path, "://") {
		return nil
	}
	_, _, err := ParsePortURL(path)
	return err
}

// CanonicalPort returns the one spelling of a port that globs, locks and
// leases compare: a network URL with its scheme and host in lower case, a
// host name without its trailing dot and the port as a plain number
// (tcp://Lab1.:022 is tcp://lab1:22); a device path made absolute and
// clean. A URL that is not a valid network port is an error.
func CanonicalPort(path string) (string, error) {
	if !strings.Contains(path, "://") {
		abs, err := filepath.Abs(path)
		if err != nil {
			return "", fmt.Errorf("port %q: %w", path, err)
		}
		return abs, nil
	}
	scheme, addr, err := ParsePortURL(path)
	if err != nil {
		return "", err
	}
	host, port, _ := net.SplitHostPort(addr)
	n, _ := strconv.Atoi(port)
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if ip, err := netip.ParseAddr(host); err == nil {
		host = ip.Unmap().String()
	}
	return scheme + "://" + net.JoinHostPort(host, strconv.Itoa(n)), nil
}

// ParsePortURL splits a network port URL into its scheme (lower case) and
// HOST:PORT.
func ParsePortURL(path string) (scheme, addr string, err error) {
	scheme, rest, ok := strings.Cut(path, "://")
	if !ok {
		return "", "", fmt.Errorf("port %q is not a URL", path)
	}
	scheme = strings.ToLower(scheme)
	if scheme != SchemeTCP && scheme != SchemeRFC2217 {
		return "", "", fmt.Errorf("port %q: unknown scheme %q (want tcp://HOST:PORT for a raw socket or rfc2217://HOST:PORT for telnet with serial port control)", path, scheme)
	}
	host, port, err := net.SplitHostPort(strings.TrimSuffix(rest, "/"))
	if err != nil {
		return "", "", fmt.Errorf("port %q: want %s://HOST:PORT: %w", path, scheme, err)
	}
	if host == "" {
		return "", "", fmt.Errorf("port %q: no host (want %s://HOST:PORT)", path, scheme)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", "", fmt.Errorf("port %q: TCP port %q is not a number from 1 to 65535", path, port)
	}
	return scheme, net.JoinHostPort(host, port), nil
}
