//go:build unix

package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/hilrun/hilrun/pkg/proc/tmpdir"
)

// TestPoolLockRefusesPlantedFiles plays a local user who, while
// XDG_RUNTIME_DIR is unset, prepares hilrun's lock folder under the
// shared temporary folder before the victim runs a pool: a folder anyone
// may write to, or a lock file that is a link to the victim's file. The
// pool refuses to start, and the victim's file keeps its content.
func TestPoolLockRefusesPlantedFiles(t *testing.T) {
	key := "bench b1"
	tests := []struct {
		name string
		mode os.FileMode
		// unsafe says poolLockDir refuses the folder; else tryLockBench
		// refuses the link.
		unsafe bool
	}{
		{"folder anyone may write to", 0o777, true},
		{"folder others may read", 0o755, true},
		{"lock file that is a link", 0o700, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			t.Setenv("XDG_RUNTIME_DIR", "")
			victim := filepath.Join(t.TempDir(), "thesis.tex")
			if err := os.WriteFile(victim, []byte("years of work\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(tmp, "hilrun-"+strconv.Itoa(os.Getuid()))
			if err := os.Mkdir(dir, tt.mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, tt.mode); err != nil { // past the umask
				t.Fatal(err)
			}
			if err := os.Symlink(victim, filepath.Join(dir, "pool-"+lockName(key)+".lock")); err != nil {
				t.Fatal(err)
			}
			got, err := poolLockDir()
			switch {
			case tt.unsafe && !errors.Is(err, tmpdir.ErrUnsafe):
				t.Errorf("poolLockDir: %v, want it refused as %v", err, tmpdir.ErrUnsafe)
			case !tt.unsafe && (err != nil || got != dir):
				t.Fatalf("poolLockDir = %s, %v; want %s", got, err, dir)
			}
			if err == nil {
				if l, err := tryLockBench(got, []string{key}); err == nil {
					l.unlock()
					t.Error("tryLockBench locked through a link")
				}
			}
			if got, err := os.ReadFile(victim); err != nil || string(got) != "years of work\n" {
				t.Errorf("the victim's file now holds %q (%v)", got, err)
			}
		})
	}
}
