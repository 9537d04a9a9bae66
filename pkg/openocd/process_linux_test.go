package openocd

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestDiesWithHilrun kills a process that launched OpenOCD: the kernel
// kills OpenOCD too (Pdeathsig), so no OpenOCD outlives hilrun holding the
// probe.
func TestDiesWithHilrun(t *testing.T) {
	launcher := exec.Command(os.Args[0])
	launcher.Env = append(os.Environ(), "HILRUN_FAKE_OPENOCD=launch")
	out, err := launcher.StdoutPipe()
	must(t, err)
	must(t, launcher.Start())
	defer launcher.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the launcher printed %q: %v", line, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("the launcher printed %q", line)
	}
	if gone(pid) {
		t.Fatal("the launched fake openocd is not running")
	}
	must(t, launcher.Process.Kill())
	launcher.Wait()
	waitGone(t, pid, "openocd launched by a killed hilrun")
}
