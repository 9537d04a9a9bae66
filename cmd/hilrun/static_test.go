package main

import (
	"context"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/testenv"
)

// hilrun ships as one static binary: built with CGO_ENABLED=0 (the only
// package of its build that would use cgo is net, for its resolver), it
// needs no dynamic loader and no shared library, and it runs. The binary
// is $HILRUN_STATIC_BIN when scripts/test built it, else built here.
func TestStaticBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds hilrun")
	}
	if runtime.GOOS != "linux" {
		t.Skip("checks a Linux ELF binary")
	}
	// An upper bound for a hang: a cold build on a busy machine takes
	// minutes.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// scripts/test builds hilrun once, with CGO_ENABLED=0, for every test
	// that runs it as a program.
	bin := os.Getenv("HILRUN_STATIC_BIN")
	if bin == "" {
		testenv.NeedTool(t, "go", "install Go")
		bin = filepath.Join(t.TempDir(), "hilrun")
		cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("CGO_ENABLED=0 go build: %v\n%s", err, out)
		}
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("the binary asks for a dynamic loader (PT_INTERP)")
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		t.Fatal(err)
	}
	if len(libs) > 0 {
		t.Errorf("the binary needs shared libraries (DT_NEEDED): %v", libs)
	}
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil || !strings.HasPrefix(string(out), "hilrun ") {
		t.Errorf("hilrun --version: %q, %v", out, err)
	}
}
