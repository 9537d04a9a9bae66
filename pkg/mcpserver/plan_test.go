package mcpserver

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/hilrun/hilrun/pkg/steps"
)

// TestPolicyReadsThePlan: the policy's check of a bound plan changes
// nothing in it (the plan before and after checking is deeply equal to
// one bound the same way and never checked), and the sequence the client
// sent is not changed by binding either.
func TestPolicyReadsThePlan(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"sub", "proj"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"fw.bin", "fw.elf"} {
		if err := os.WriteFile(filepath.Join(root, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	src := []byte(`devices:
  dut: {port: /dev/null}
steps:
  - exec: [echo, hi]
    dir: sub
  - build: {command: [make], dir: proj, elf: out.elf}
  - {mem_read: 0x20000000, elf: fw.elf}
  - upload: {openocd: {file: fw.bin, method: load, offset: 0x8000000}}
`)
	load := func() *steps.Sequence {
		seq, err := steps.Parse(filepath.Join(root, "seq.yaml"), src, steps.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return seq
	}
	s, err := New(Config{Policy: Policy{Roots: []string{root}, AllowExec: true, AllowPorts: []string{"/dev/null"}}, DefaultOpenOCD: "127.0.0.1:4444", Log: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sent := load()
	pl, _, err := s.bindPlan(sent, execOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(sent, load()) {
		t.Error("binding changed the sequence the client sent")
	}
	twin, _, err := s.bindPlan(load(), execOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := pl.Sequence().Steps[0].Exec.Dir; got != filepath.Join(root, "sub") {
		t.Fatalf("the plan's exec dir = %q, want it resolved under the root", got)
	}
	if err := s.checkPlan(pl, nil); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(pl, twin) {
		t.Error("the policy's check changed the plan")
	}
}
