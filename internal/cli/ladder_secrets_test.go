package cli_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// ladderPSK is the value the health checks of TestLadderSecrets send.
const ladderPSK = "ladder-psk-4711"

// ladderHealth is a health check that sends the bench's secret psk to
// the board and to a command, which passes only when it got the value.
const ladderHealth = `health:
  - send: echo login ${psk}
    expect: login
  - exec: [sh, -c, 'test "$0" = ` + ladderPSK + `', '${psk}']
`

// TestLadderSecrets: a bench's health check sends the bench's secrets,
// as a sequence that declares them does, in hilrun run and in a pool; a
// wrong value fails the check, a missing one stops the run before it
// starts, naming where its source is written; nothing the runs wrote or
// printed holds the value.
func TestLadderSecrets(t *testing.T) {
	port := simPorts(t, 1)[0]
	in := t.TempDir()
	bench := writeFile(t, in, "lab.bench.yaml", "secrets:\n  psk: env:HILRUN_TEST_LADDER_PSK\n"+ladderHealth)
	pool := writeFile(t, in, "lab.pool.yaml", "benches:\n  - name: one\n    devices: {console: "+port+"}\n    secrets:\n      psk: env:HILRUN_TEST_LADDER_PSK\n    "+
		strings.ReplaceAll(strings.TrimSuffix(ladderHealth, "\n"), "\n", "\n    ")+"\n")
	seq := writeFile(t, in, "ok.yaml", "name: ok\nsteps:\n  - {send: version, expect: hilrun-sim}\n")
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	runs := map[string][]string{
		"run":  {"run", "--sim", "--bench", bench},
		"pool": {"run", "--pool", pool},
	}

	for name, args := range runs {
		code, stdout, stderr := hilrun(append(args, seq)...)
		at := map[string]string{"run": bench + ":2:8", "pool": pool + ":5:12"}[name]
		if code != 2 || !strings.Contains(stderr, at+": secret psk: the environment variable HILRUN_TEST_LADDER_PSK is not set") {
			t.Errorf("%s without the secret: exit %d, want 2 naming its source\n%s%s", name, code, stdout, stderr)
		}
	}

	t.Setenv("HILRUN_TEST_LADDER_PSK", "not-"+ladderPSK)
	for name, args := range runs {
		code, stdout, stderr := hilrun(append(args, seq)...)
		if code != 3 || !strings.Contains(stdout, "the health check failed before ") {
			t.Errorf("%s with a wrong secret: exit %d, want 3 (the health check fails)\n%s%s", name, code, stdout, stderr)
		}
	}

	t.Setenv("HILRUN_TEST_LADDER_PSK", ladderPSK)
	for name, args := range runs {
		out := t.TempDir()
		code, stdout, stderr := hilrun(append(args, "--log-dir", filepath.Join(out, "logs"), "--json", filepath.Join(out, "r.json"), seq)...)
		if code != 0 {
			t.Errorf("%s: exit %d, want 0 (the health check gets the secret)\n%s%s", name, code, stdout, stderr)
			continue
		}
		written := map[string]string{"stdout": stdout, "stderr": stderr}
		readWritten(t, out, written)
		noSecretIn(t, written, ladderPSK)
		masked := false
		for file, text := range written {
			masked = masked || strings.HasSuffix(file, "console.log") && strings.Contains(text, "login ***************")
		}
		if !masked {
			t.Errorf("%s: no console log of the health check shows its send masked: %v", name, keys(written))
		}
	}
}

// keys are the names of m, for a message.
func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
