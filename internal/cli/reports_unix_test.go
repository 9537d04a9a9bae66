//go:build unix

package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestReportModeHonoursUmask checks that a report gets 0666 less the umask,
// not the 0600 of a temporary file.
func TestReportModeHonoursUmask(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	path := filepath.Join(t.TempDir(), "r.json")
	if err := writeFile(context.Background(), path, func(w io.Writer) error { _, err := io.WriteString(w, "{}"); return err }); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if m := fi.Mode().Perm(); m != 0o644 {
		t.Errorf("mode %o, want 644", m)
	}
}
