//go:build unix

package process

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/testenv"
)

// TestWatchedEndsAsTheProgram: a watched program's output, exit status
// and death by a signal are seen as if it ran alone, and Terminate reaches
// it. (internal/cli tests that what it starts dies with hilrun.)
func TestWatchedEndsAsTheProgram(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		terminate    bool
		code         int
		signal       syscall.Signal
	}{
		{"exit status", "echo out; echo err >&2; exit 3", false, 3, 0},
		{"killed by a signal", "echo out; echo err >&2; kill -TERM $$", false, 128 + 15, syscall.SIGTERM},
		{"terminated", "echo out; echo err >&2; exec sleep 100", true, 128 + 15, syscall.SIGTERM},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command("sh", "-c", tc.script)
			var out, errOut testenv.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errOut
			prepare(cmd)
			if !strings.Contains(strings.Join(cmd.Args, " "), "kill -9 0") {
				t.Fatalf("not watched: %v", cmd.Args)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if tc.terminate {
				deadline := time.Now().Add(10 * time.Second)
				for !strings.Contains(errOut.String(), "err") && time.Now().Before(deadline) {
					time.Sleep(10 * time.Millisecond)
				}
				Terminate(cmd.Process)
			}
			cmd.Wait()
			Kill(cmd.Process) // as callers do: the watcher goes too
			if got := ExitCode(cmd.ProcessState); got != tc.code {
				t.Errorf("exit code %d, want %d (stderr %q)", got, tc.code, errOut.String())
			}
			if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); tc.signal != 0 && (!ws.Signaled() || ws.Signal() != tc.signal) {
				t.Errorf("wait status %v, want killed by %v", cmd.ProcessState, tc.signal)
			}
			if out.String() != "out\n" || errOut.String() != "err\n" {
				t.Errorf("output %q %q, want the program's", out.String(), errOut.String())
			}
		})
	}
}
