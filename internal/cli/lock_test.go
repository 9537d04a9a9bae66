package cli_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/internal/cli"
	"github.com/hilrun/hilrun/pkg/sim"
)

// TestPortLockRace starts two hilrun processes on one port at once, and
// then a third while another program holds the port's UUCP lock: exactly
// one process wins the port, and the others say who holds it.
func TestPortLockRace(t *testing.T) {
	if _, err := os.Stat("/var/lock"); err != nil {
		if _, err := os.Stat("/run/lock"); err != nil {
			t.Skip("no lock folder (/var/lock or /run/lock) on this machine")
		}
	}
	b := sim.New(sim.Options{})
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	bin := hilrunBinary(t)
	// The winner holds the port until the test creates the gate file,
	// which it does once the loser has given up.
	gate := filepath.Join(t.TempDir(), "gate")
	seq := writeFile(t, t.TempDir(), "seq.yaml", `
steps:
  - send: echo mine
    expect: mine
  - exec: [sh, -c, "until [ -e '`+gate+`' ]; do sleep 0.01; done"]
    timeout: 120s
`)
	type outcome struct {
		code int
		out  string
	}
	run := func() outcome {
		cmd := exec.Command(bin, "run", "--port", "console="+b.SerialPath(), seq)
		out, _ := cmd.CombinedOutput()
		return outcome{cmd.ProcessState.ExitCode(), string(out)}
	}
	results := make([]outcome, 2)
	finished := make(chan struct{}, len(results))
	for i := range results {
		go func() { results[i] = run(); finished <- struct{}{} }()
	}
	<-finished
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	<-finished
	wins := 0
	for _, r := range results {
		switch r.code {
		case cli.ExitPassed:
			wins++
		case cli.ExitInfra:
			if !strings.Contains(r.out, "port busy: held by PID") || !strings.Contains(r.out, "(hilrun)") {
				t.Errorf("the loser does not say who holds the port:\n%s", r.out)
			}
		default:
			t.Errorf("exit %d:\n%s", r.code, r.out)
		}
	}
	if wins != 1 {
		t.Errorf("%d processes won the port, want exactly 1", wins)
	}

	// Another program holds the lock, as picocom would.
	holder := exec.Command("sleep", "30")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { holder.Process.Kill(); holder.Wait() }()
	real, err := filepath.EvalSymlinks(b.SerialPath())
	if err != nil {
		t.Fatal(err)
	}
	dir := "/var/lock"
	if _, err := os.Stat(dir); err != nil {
		dir = "/run/lock"
	}
	lock := filepath.Join(dir, "LCK.."+filepath.Base(real))
	if err := os.WriteFile(lock, []byte(fmt.Sprintf("%10d\n", holder.Process.Pid)), 0o644); err != nil {
		t.Skipf("cannot write a lock file in %s: %v", dir, err)
	}
	defer os.Remove(lock)
	r := run()
	if r.code != cli.ExitInfra || !strings.Contains(r.out, fmt.Sprintf("port busy: held by PID %d (sleep)", holder.Process.Pid)) {
		t.Errorf("with the lock held by sleep: exit %d\n%s", r.code, r.out)
	}
}
