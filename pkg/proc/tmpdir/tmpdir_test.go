//go:build unix

package tmpdir

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as a hilrun that makes a folder and waits to be
// killed.
func TestMain(m *testing.M) {
	if os.Getenv("HILRUN_TMPDIR_CHILD") == "1" {
		d, err := New("test")
		if err != nil {
			os.Stderr.WriteString(err.Error())
			os.Exit(1)
		}
		os.Stdout.WriteString(d.Path + "\n")
		os.Stdin.Read(make([]byte, 1))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// A folder whose process was killed with SIGKILL is removed by the next
// Sweep; one whose process lives, and folders that are not New's, stay.
func TestSweepRemovesFoldersOfDeadProcesses(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	start := func() (*exec.Cmd, string) {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "HILRUN_TMPDIR_CHILD=1")
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { stdin.Close() })
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(out).ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return cmd, strings.TrimSpace(line)
	}
	killed, dead := start()
	alive, living := start()
	t.Cleanup(func() { alive.Process.Kill(); alive.Wait() })
	killed.Process.Signal(syscall.SIGKILL)
	killed.Wait()
	foreign := filepath.Join(os.TempDir(), Prefix+"not-ours")
	if err := os.Mkdir(foreign, 0o755); err != nil {
		t.Fatal(err)
	}
	// Old and without an owner file: New's, killed before it held the
	// folder, when empty; another program's when not.
	old := time.Now().Add(-2 * orphanAge)
	orphan := filepath.Join(os.TempDir(), Prefix+"mcp-killed-early")
	if err := os.Mkdir(orphan, 0o700); err != nil {
		t.Fatal(err)
	}
	foreignOld := filepath.Join(os.TempDir(), Prefix+"not-ours-old")
	if err := os.Mkdir(foreignOld, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(foreignOld, "data"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{orphan, foreignOld} {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}

	removed, err := Sweep()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(removed)
	if want := []string{orphan, dead}; !slices.Equal(removed, want) {
		t.Errorf("Sweep removed %q, want %q", removed, want)
	}
	for _, keep := range []string{living, foreign, foreignOld} {
		if _, err := os.Stat(keep); err != nil {
			t.Errorf("%s: %v", keep, err)
		}
	}
	for _, gone := range []string{dead, orphan} {
		if _, err := os.Stat(gone); !os.IsNotExist(err) {
			t.Errorf("%s is still there: %v", gone, err)
		}
	}
}

func TestRemove(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	d, err := New("x")
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(d.Path); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("%s: %v %v", d.Path, fi, err)
	}
	if err := d.Remove(); err != nil {
		t.Fatal(err)
	}
	if err := d.Remove(); err != nil {
		t.Errorf("second Remove: %v", err)
	}
	if _, err := os.Stat(d.Path); !os.IsNotExist(err) {
		t.Errorf("%s is still there", d.Path)
	}
}
