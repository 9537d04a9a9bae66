package cli_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
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
	seq := writeFile(t, t.TempDir(), "seq.yaml", `
steps:
  - send: echo mine
    expect: mine
  - delay: 1500ms
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
	var wg sync.WaitGroup
	results := make([]outcome, 2)
	for i := range results {
		wg.Add(1)
		go func() { defer wg.Done(); results[i] = run() }()
	}
	wg.Wait()
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
