package cli_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hilrun/hilrun/internal/cli"
	"github.com/hilrun/hilrun/pkg/testenv"
)

// TestSignalKeepsProgressLines interrupts hilrun run while a step waits:
// the progress console, which holds its lines off the steps' path, has
// written the steps before it by then (while the run waited), writes them
// before the signal's line, and writes every line after it too: the
// interrupted step, the finally step and the sequence's end.
func TestSignalKeepsProgressLines(t *testing.T) {
	dir := t.TempDir()
	seq := writeFile(t, dir, "seq.yaml", `
name: held
steps:
  - send: echo one
    expect: one
  - send: echo two
    expect: two
  - send: echo three
    expect: three
  - send: echo four
    expect: never printed
    timeout: 60s
finally:
  - send: echo cleanup
    expect: cleanup
`)
	cmd := exec.Command(hilrunBinary(t), "run", "--sim", "--json", filepath.Join(dir, "r.json"), seq)
	var out testenv.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out // one pipe: the order as a terminal shows it
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the steps before the waiting one to be printed", func() bool { return strings.Contains(out.String(), "echo three") })
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd, &out, &out); code != cli.ExitInterrupted {
		t.Fatalf("exit code %d, want 130\n%s", code, out.String())
	}
	text := out.String()
	at := -1
	for _, want := range []string{"echo one", "echo two", "echo three", "interrupt: stopping", "step 3", "step finally.0", "INTERRUPTED held"} {
		i := strings.Index(text, want)
		if i < 0 {
			t.Fatalf("no %q in:\n%s", want, text)
		}
		if i < at {
			t.Fatalf("%q out of order in:\n%s", want, text)
		}
		at = i
	}
}
