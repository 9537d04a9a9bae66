package process

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/gate/environ"
)

// TestZeroPolicyStartsNothing: a policy nobody made refuses every
// program before looking for it.
func TestZeroPolicyStartsNothing(t *testing.T) {
	if _, err := (Policy{}).Start(Spec{Purpose: HostCommand, Argv: []string{"true"}}); !errors.Is(err, ErrRefused) {
		t.Errorf("the zero policy started a program: %v", err)
	}
}

// TestAllowSeesTheStart: the policy's Allow sees the program found, its
// arguments, folder and whole environment, and its refusal is the error.
func TestAllowSeesTheStart(t *testing.T) {
	dir := t.TempDir()
	var seen Start
	refuse := errors.New("no")
	p := Policy{Env: environ.Of([]string{"PATH=/usr/bin:/bin", "A=1"}), Allow: func(s Start) error { seen = s; return refuse }}
	_, err := p.Start(Spec{Purpose: HostCommand, Argv: []string{"sh", "-c", "true"}, Dir: dir, Env: []string{"B=2"}})
	if !errors.Is(err, refuse) {
		t.Fatalf("err = %v, want the refusal", err)
	}
	if !strings.HasSuffix(seen.Path, "/sh") || seen.Args[0] != "sh" || seen.Dir != dir || strings.Join(seen.Env, " ") != "PATH=/usr/bin:/bin A=1 B=2" {
		t.Errorf("Allow saw %+v", seen)
	}
}

// TestLookPathUsesThePolicyPath: programs are found on the PATH of the
// policy's environment, never in hilrun's working folder through an
// empty or relative entry.
func TestLookPathUsesThePolicyPath(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "hilrun-gate-prog")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\necho found\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	for _, path := range []string{"", ".", "relative/bin"} {
		p := Permit(environ.Of([]string{"PATH=" + path}))
		if _, err := p.LookPath("hilrun-gate-prog", ""); !errors.Is(err, ErrNotFound) {
			t.Errorf("PATH=%q found the program in the working folder: %v", path, err)
		}
	}
	p := Permit(environ.Of([]string{"PATH=/nonexistent:" + dir}))
	var out bytes.Buffer
	code, err := Runner{Policy: p}.Run(context.Background(), []string{"hilrun-gate-prog"}, "", nil, &out)
	if err != nil || code != 0 || out.String() != "found\n" {
		t.Errorf("run = %d, %v, %q", code, err, out.String())
	}
}
