package cli_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestPoolLadderMasksSecrets: a pool bench's ladder runs on consoles that
// mask the run's secrets as its sequences' do: a board that prints a
// secret after the sequence that sent it ended in a bench error shows
// only stars to the health check that follows, in its logs and in the
// climb every report keeps; a value typed into a rung shows as
// ***name*** there.
func TestPoolLadderMasksSecrets(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	t.Setenv("HILRUN_TEST_TOKEN", secretToken)
	pool := writeFile(t, dir, "lab.pool.yaml", `benches:
  - name: one
    sim: true
    health:
      - send: echo alive
        expect: alive
        timeout: 3s
    recover:
      - send: reboot `+secretToken+`
`)
	seqs := []string{
		writeFile(t, dir, "late.yaml", "name: late\nsecrets: [api_token]\nsteps:\n  - send: sleep 1000; echo token=${api_token}; hang\n  - exec: [hilrun-no-such-program]\n"),
		writeFile(t, dir, "next.yaml", "name: next\nsteps:\n  - send: version\n    expect: hilrun-sim\n"),
	}
	out := t.TempDir()
	code, stdout, stderr := hilrun(append([]string{"run", "--pool", pool, "-j", "1", "--secret", "api_token=env:HILRUN_TEST_TOKEN",
		"--log-dir", filepath.Join(out, "logs"), "--json", filepath.Join(out, "r.json"), "--junit", filepath.Join(out, "r.xml"),
		"--html", filepath.Join(out, "r.html"), "--allure", filepath.Join(out, "allure")}, seqs...)...)
	if code != 3 {
		t.Fatalf("exit %d, want 3 (a bench error, then the bench is bad)\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "rung 1 send reboot ***api_token***") {
		t.Errorf("the climb does not name the rung with the value hidden:\n%s", stdout)
	}
	written := map[string]string{"stdout": stdout, "stderr": stderr}
	readWritten(t, out, written)
	noSecretIn(t, written, secretToken)
	masked := false
	for name, text := range written {
		if strings.Contains(name, filepath.Join("bench", "recover-1", "health")) && strings.Contains(text, "token=************") {
			masked = true
		}
	}
	if !masked {
		t.Errorf("no log of the health check after the bench error shows what the board printed, masked: %s", stdout)
	}
}
