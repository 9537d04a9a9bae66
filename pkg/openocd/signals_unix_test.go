//go:build unix

package openocd

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// pause stops p as if it hung (SIGSTOP).
func pause(t testing.TB, p *os.Process) {
	t.Helper()
	must(t, p.Signal(syscall.SIGSTOP))
}

// resume continues a paused p.
func resume(p *os.Process) { p.Signal(syscall.SIGCONT) }

// gone reports whether no live process has the pid (a zombie is dead).
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false // alive, or no /proc to tell a zombie by
	}
	_, rest, _ := strings.Cut(string(stat), ") ")
	return strings.HasPrefix(rest, "Z")
}

// waitGone fails the test unless the pid is gone within 3 seconds.
func waitGone(t testing.TB, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !gone(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("%s (pid %d) is still running", what, pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
