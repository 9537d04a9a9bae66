// Package files is hilrun's one gate for opening files that a sequence, a
// bench, a request or a command line names: sequence and bench files,
// ELF files and images, reports and the folders they go to. The packages
// that handle sequences and requests (steps, runner, mcpserver, repl,
// report) open such files only here (a test walks the source to keep it
// so). A Policy either lets any file be opened (the command line: the
// user names their own files) or only files under its roots, opened
// through os.Root so that neither ".." nor a symbolic link, even one
// swapped in after a check, leads out of them. The zero Policy opens
// nothing.
package files

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrRefused is wrapped by every error of a file a Policy does not let
// be opened.
var ErrRefused = errors.New("refused by the file policy")

// Policy says which named files may be opened.
type Policy struct {
	anywhere bool
	roots    []string // absolute, clean, links resolved
}

// Anywhere is the policy of the user's own command line: any file.
func Anywhere() Policy { return Policy{anywhere: true} }

// Under is the policy that opens only files under the folders roots
// (resolved to their real paths; each must exist and be a folder). No
// roots opens nothing.
func Under(roots ...string) (Policy, error) {
	p := Policy{}
	for _, r := range roots {
		abs, err := filepath.Abs(r)
		if err != nil {
			return Policy{}, fmt.Errorf("root %s: %w", r, err)
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return Policy{}, fmt.Errorf("root %s: %w", r, err)
		}
		fi, err := os.Stat(real)
		if err != nil {
			return Policy{}, fmt.Errorf("root %s: %w", r, err)
		}
		if !fi.IsDir() {
			return Policy{}, fmt.Errorf("root %s is not a folder", r)
		}
		p.roots = append(p.roots, real)
	}
	return p, nil
}

// Roots are the policy's roots, real paths; none for Anywhere.
func (p Policy) Roots() []string { return append([]string(nil), p.roots...) }

// Anywhere says whether the policy opens any file.
func (p Policy) Anywhere() bool { return p.anywhere }

// Contains says whether name (absolute, or relative to the working
// folder, as for os.Open) lies under one of the roots, as written or through the links it leads
// through; always true for Anywhere. It opens nothing; Open and the rest
// check again as they open.
func (p Policy) Contains(name string) bool {
	if p.anywhere {
		return true
	}
	_, _, err := p.place(name)
	return err == nil
}

// place finds the root name lies under and name relative to it.
func (p Policy) place(name string) (root, rel string, err error) {
	if len(p.roots) == 0 {
		return "", "", fmt.Errorf("%s: %w: no folder may be read or written", name, ErrRefused)
	}
	if name == "" {
		return "", "", errors.New("empty file name")
	}
	abs, err := filepath.Abs(name)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", name, err)
	}
	if r, rel, ok := p.under(abs); ok {
		return r, rel, nil
	}
	// The name may lead into a root through a link (a root given as /tmp,
	// which is /private/tmp on macOS); os.Root checks the rest.
	if real, err := evalParent(abs); err == nil {
		if r, rel, ok := p.under(real); ok {
			return r, rel, nil
		}
	}
	return "", "", fmt.Errorf("%s: %w: outside %s", name, ErrRefused, strings.Join(p.roots, ", "))
}

// evalParent resolves the links of f's folder, and of f when it exists.
func evalParent(f string) (string, error) {
	if real, err := filepath.EvalSymlinks(f); err == nil {
		return real, nil
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(f))
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, filepath.Base(f)), nil
}

func (p Policy) under(abs string) (root, rel string, ok bool) {
	for _, r := range p.roots {
		rel, err := filepath.Rel(r, abs)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
			return r, rel, true
		}
	}
	return "", "", false
}

// withRoot runs f on name's root, opened for the call.
func (p Policy) withRoot(name string, f func(r *os.Root, rel string) error) error {
	root, rel, err := p.place(name)
	if err != nil {
		return err
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := f(r, rel); err != nil {
		return refusedEscape(name, err)
	}
	return nil
}

// refusedEscape says that os.Root refused a path that leaves its root.
func refusedEscape(name string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "escapes") {
		return fmt.Errorf("%s: %w: it leads out of its root (%v)", name, ErrRefused, pe.Err)
	}
	return err
}

// OpenFile opens name as os.OpenFile does, when the policy allows it.
func (p Policy) OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	if p.anywhere {
		return os.OpenFile(name, flag, perm)
	}
	var f *os.File
	err := p.withRoot(name, func(r *os.Root, rel string) error {
		var err error
		f, err = r.OpenFile(rel, flag, perm)
		return err
	})
	return f, err
}

// Open opens name for reading.
func (p Policy) Open(name string) (*os.File, error) { return p.OpenFile(name, os.O_RDONLY, 0) }

// Create creates or truncates name for writing, mode 0666 before umask.
func (p Policy) Create(name string) (*os.File, error) {
	return p.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
}

// ReadFile reads the whole of name.
func (p Policy) ReadFile(name string) ([]byte, error) {
	if p.anywhere {
		return os.ReadFile(name)
	}
	var b []byte
	err := p.withRoot(name, func(r *os.Root, rel string) error {
		var err error
		b, err = r.ReadFile(rel)
		return err
	})
	return b, err
}

// WriteFile writes data to name, creating it with perm or truncating it.
func (p Policy) WriteFile(name string, data []byte, perm fs.FileMode) error {
	if p.anywhere {
		return os.WriteFile(name, data, perm)
	}
	return p.withRoot(name, func(r *os.Root, rel string) error { return r.WriteFile(rel, data, perm) })
}

// Stat describes name, following links.
func (p Policy) Stat(name string) (fs.FileInfo, error) {
	if p.anywhere {
		return os.Stat(name)
	}
	var fi fs.FileInfo
	err := p.withRoot(name, func(r *os.Root, rel string) error {
		var err error
		fi, err = r.Stat(rel)
		return err
	})
	return fi, err
}

// MkdirAll makes the folder name and the folders above it that are
// missing, with perm.
func (p Policy) MkdirAll(name string, perm fs.FileMode) error {
	if p.anywhere {
		return os.MkdirAll(name, perm)
	}
	return p.withRoot(name, func(r *os.Root, rel string) error { return r.MkdirAll(rel, perm) })
}

// Real is the real path of name (links resolved) when the policy allows
// it: the path to hand a program that opens the file itself (OpenOCD
// loading an image), checked through the root so that no link leads out.
func (p Policy) Real(name string) (string, error) {
	if p.anywhere {
		return filepath.EvalSymlinks(name)
	}
	if _, err := p.Stat(name); err != nil {
		return "", err
	}
	abs, err := filepath.Abs(name)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	if _, _, ok := p.under(real); !ok {
		return "", fmt.Errorf("%s: %w: it leads to %s, outside %s", name, ErrRefused, real, strings.Join(p.roots, ", "))
	}
	return real, nil
}
