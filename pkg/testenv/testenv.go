// Package testenv holds what hilrun's tests share about their
// environment: the rule that a missing tool skips a test on a developer's
// machine but fails it under CI=true, where a skip would hide a broken
// setup, and a buffer for the output of processes the tests run.
package testenv

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

// CI reports whether the tests run under CI=true.
func CI() bool { return os.Getenv("CI") == "true" }

// Missing ends t because something it needs is missing: a skip, or under
// CI=true a failure.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if CI() {
		t.Fatalf(format+" (required under CI=true)", args...)
	}
	t.Skipf(format, args...)
}

// NeedTool returns the path of the program name, or ends t with Missing;
// install says how to get it, such as "apt-get install openocd".
func NeedTool(t testing.TB, name, install string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Missing(t, "%s is not installed (%s): %v", name, install, err)
	}
	return p
}

// SimFirmware returns the path of the virtual board's firmware image,
// firmware/sim/sim.elf, from a package dir levels below the repository's
// root, or ends t with Missing when it is absent (it is checked in, so
// under CI=true that fails).
func SimFirmware(t testing.TB, up int) string {
	t.Helper()
	p := filepath.Join(append(slices.Repeat([]string{".."}, up), "firmware", "sim", "sim.elf")...)
	if _, err := os.Stat(p); err != nil {
		Missing(t, "firmware/sim/sim.elf is absent: %v", err)
	}
	return p
}

// Buffer is a bytes.Buffer that is safe to read while a process writes to
// it.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
