//go:build unix

package tmpdir

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/hilrun/hilrun/pkg/gate/environ"
)

func TestPrivate(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, path string)
		why     string // in the error; "" when the folder is accepted
	}{
		{"missing: made", func(*testing.T, string) {}, ""},
		{"mode 0700", func(t *testing.T, p string) { mkdir(t, p, 0o700) }, ""},
		{"mode 0777", func(t *testing.T, p string) { mkdir(t, p, 0o777) }, "its mode is 0777, not 0700"},
		{"mode 0750", func(t *testing.T, p string) { mkdir(t, p, 0o750) }, "its mode is 0750, not 0700"},
		{"link to a private folder", func(t *testing.T, p string) {
			real := p + ".real"
			mkdir(t, real, 0o700)
			if err := os.Symlink(real, p); err != nil {
				t.Fatal(err)
			}
		}, "it is a link"},
		{"file", func(t *testing.T, p string) {
			if err := os.WriteFile(p, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "it is not a folder"},
		{"another user's", func(t *testing.T, p string) {
			if os.Getuid() != 0 {
				t.Skip("giving a folder to another user needs root")
			}
			mkdir(t, p, 0o700)
			if err := os.Chown(p, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}, "it belongs to user 65534"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "hilrun-test")
			tt.prepare(t, path)
			err := Private(path)
			if tt.why == "" {
				if err != nil {
					t.Fatal(err)
				}
				if fi, err := os.Lstat(path); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
					t.Errorf("%s: %v %v", path, fi, err)
				}
				return
			}
			if !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), tt.why) || !strings.Contains(err.Error(), path) {
				t.Errorf("Private: %v; want an error naming %s and saying %q", err, path, tt.why)
			}
		})
	}
}

// A umask that takes the owner's bits away does not make hilrun refuse
// the folder it has just made.
func TestPrivateUnderUmask(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hilrun-test")
	old := syscall.Umask(0o777)
	err := Private(path)
	syscall.Umask(old)
	if err != nil {
		t.Fatal(err)
	}
}

func TestRuntimeDir(t *testing.T) {
	tmp, run := t.TempDir(), t.TempDir()
	t.Setenv("TMPDIR", tmp)
	for _, tt := range []struct{ name, xdg, want string }{
		{"XDG_RUNTIME_DIR", run, filepath.Join(run, "hilrun")},
		{"temporary folder", "", filepath.Join(tmp, "hilrun-"+strconv.Itoa(os.Getuid()))},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("XDG_RUNTIME_DIR", tt.xdg)
			got, err := RuntimeDir(environ.Host())
			if err != nil || got != tt.want {
				t.Errorf("RuntimeDir = %s, %v; want %s", got, err, tt.want)
			}
		})
	}
}

// OpenLock refuses a link in place of the lock file and leaves the file
// it points at as it was.
func TestOpenLockRefusesLinks(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "x.lock")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if f, err := OpenLock(link); err == nil {
		f.Close()
		t.Fatal("OpenLock followed the link")
	}
	if got, _ := os.ReadFile(target); string(got) != "keep" {
		t.Errorf("target holds %q", got)
	}
	f, err := OpenLock(filepath.Join(dir, "y.lock"))
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func mkdir(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.Mkdir(path, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}
