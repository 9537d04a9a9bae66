package files_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/hilrun/hilrun/pkg/gate/files"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestUnderRoots: a policy with roots opens what lies under them, by
// absolute or relative name, and refuses what lies outside, however it is
// reached: an absolute path, "..", a link, a link in a folder on the way.
func TestUnderRoots(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	write(t, filepath.Join(root, "in.txt"), "in")
	write(t, filepath.Join(outside, "secret"), "secret")
	if err := os.Mkdir(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, "sub", "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "dirlink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("in.txt", filepath.Join(root, "inner")); err != nil {
		t.Fatal(err)
	}
	p, err := files.Under(root)
	if err != nil {
		t.Fatal(err)
	}
	// Relative names are taken from the working folder, as os.Open does.
	t.Chdir(root)
	for _, name := range []string{filepath.Join(root, "in.txt"), "in.txt", filepath.Join(root, "inner"), "sub/../in.txt"} {
		if b, err := p.ReadFile(name); err != nil || string(b) != "in" {
			t.Errorf("read %s = %q, %v; want in", name, b, err)
		}
	}
	for _, name := range []string{
		filepath.Join(outside, "secret"),
		filepath.Join(root, "..", filepath.Base(outside), "secret"),
		filepath.Join(root, "sub", "link"),
		filepath.Join(root, "dirlink", "secret"),
		"../" + filepath.Base(outside) + "/secret",
	} {
		if b, err := p.ReadFile(name); !errors.Is(err, files.ErrRefused) {
			t.Errorf("read %s = %q, %v; want it refused", name, b, err)
		}
		if _, err := p.Open(name); !errors.Is(err, files.ErrRefused) {
			t.Errorf("open %s: %v; want it refused", name, err)
		}
	}
	// A write through a link that leads out is refused, and the target
	// stays as it was.
	if err := p.WriteFile(filepath.Join(root, "sub", "link"), []byte("x"), 0o644); !errors.Is(err, files.ErrRefused) {
		t.Errorf("write through a link out: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret")); string(b) != "secret" {
		t.Errorf("the file outside was changed: %q", b)
	}
	if err := p.MkdirAll(filepath.Join(root, "a", "b"), 0o755); err != nil {
		t.Errorf("make a folder under the root: %v", err)
	}
	if real, err := p.Real(filepath.Join(root, "inner")); err != nil || real != filepath.Join(p.Roots()[0], "in.txt") {
		t.Errorf("Real = %q, %v", real, err)
	}
	if _, err := p.Real(filepath.Join(root, "sub", "link")); !errors.Is(err, files.ErrRefused) {
		t.Errorf("Real of a link out: %v", err)
	}
}

// TestSwappedLink: a link swapped in after the name was checked still
// cannot lead out, since the open goes through the root.
func TestSwappedLink(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	write(t, filepath.Join(outside, "secret"), "secret")
	name := filepath.Join(root, "file")
	write(t, name, "mine")
	p, err := files.Under(root)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Contains(name) {
		t.Fatal("the file under the root is not contained")
	}
	os.Remove(name)
	if err := os.Symlink(filepath.Join(outside, "secret"), name); err != nil {
		t.Fatal(err)
	}
	if b, err := p.ReadFile(name); !errors.Is(err, files.ErrRefused) {
		t.Errorf("read after the swap = %q, %v; want it refused", b, err)
	}
}

// TestZeroPolicyOpensNothing: a policy nobody made refuses every file;
// Anywhere opens any.
func TestZeroPolicyOpensNothing(t *testing.T) {
	f := filepath.Join(t.TempDir(), "f")
	write(t, f, "x")
	if _, err := (files.Policy{}).ReadFile(f); !errors.Is(err, files.ErrRefused) {
		t.Errorf("the zero policy read a file: %v", err)
	}
	if b, err := files.Anywhere().ReadFile(f); err != nil || string(b) != "x" {
		t.Errorf("Anywhere: %q, %v", b, err)
	}
}
