package cli_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hilrun/hilrun/internal/cli"
	"github.com/hilrun/hilrun/pkg/sim"
)

// TestPortLockRace starts two hilrun processes on one port at once, and
// then a third while another program holds the port: exactly one process
// wins the port, and the others say who holds it.
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

	// Another program holds the port, as picocom would: the board's port
	// is a pty, which hilrun and picocom lock with flock on the device.
	other, err := os.OpenFile(b.SerialPath(), os.O_RDONLY|syscall.O_NOCTTY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := syscall.Flock(int(other.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	r := run()
	if want := fmt.Sprintf("port busy: held by PID %d (%s), flock on %s", os.Getpid(), command(t), b.SerialPath()); r.code != cli.ExitInfra || !strings.Contains(r.out, want) {
		t.Errorf("with the port locked by another program: exit %d\n%s\nwant it to say %q", r.code, r.out, want)
	}
}

// command is the name the kernel gives this process (/proc/self/comm).
func command(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	return strings.TrimSpace(string(b))
}
