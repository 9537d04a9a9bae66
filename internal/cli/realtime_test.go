package cli_test

import (
	"bytes"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// TestRealtimeFlag runs a timed sequence with --realtime, once as this
// process may and once with the capabilities it needs dropped (setpriv):
// the run passes either way, and a refusal is said on stderr, naming
// what was refused.
func TestRealtimeFlag(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("--realtime acts on Linux only")
	}
	bin := hilrunBinary(t)
	seq := writeFile(t, t.TempDir(), "timed.yaml", `name: timed
steps:
  - delay: 2ms
  - repeat: {count: 3, every: 2ms}
    steps:
      - delay: 1ms
`)
	run := func(argv ...string) string {
		t.Helper()
		cmd := exec.Command(argv[0], argv[1:]...)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s\n%s", strings.Join(argv, " "), err, out.String(), errOut.String())
		}
		for _, line := range strings.Split(strings.TrimSpace(errOut.String()), "\n") {
			if line != "" && !(strings.HasPrefix(line, "hilrun: --realtime: ") && strings.Contains(line, "refused")) {
				t.Errorf("unexpected line on stderr: %q", line)
			}
		}
		return errOut.String()
	}
	run(bin, "run", "--realtime", seq)

	if os.Geteuid() != 0 {
		return // the run above had no capabilities to drop
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("no setpriv to drop capabilities with")
	}
	got := run(setpriv, "--inh-caps=-all", "--bounding-set=-sys_nice,-ipc_lock", "--", bin, "run", "--realtime", seq)
	if !strings.Contains(got, "SCHED_FIFO) was refused") {
		t.Errorf("without CAP_SYS_NICE, stderr does not say that real-time scheduling was refused:\n%s", got)
	}
}
