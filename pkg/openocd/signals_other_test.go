//go:build !unix

package openocd

import (
	"os"
	"testing"
)

func pause(t testing.TB, p *os.Process) { t.Skip("no SIGSTOP here") }

func resume(p *os.Process) {}

func gone(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return true
	}
	p.Release()
	return false
}

func waitGone(t testing.TB, pid int, what string) {
	t.Skip("cannot tell whether a process is gone here")
}
