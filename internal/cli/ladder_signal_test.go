package cli_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/hilrun/hilrun/internal/cli"
	"github.com/hilrun/hilrun/pkg/testenv"
)

// TestSignalDuringClimb interrupts a real hilrun while a rung of the
// bench's ladder runs a host program: the program is gone when hilrun
// exits, with 130, the reports hold the sequence that ran and the climb,
// interrupted, and the bench is not marked bad for it; with a pool too.
func TestSignalDuringClimb(t *testing.T) {
	for _, pool := range []bool{false, true} {
		t.Run(map[bool]string{false: "run", true: "pool"}[pool], func(t *testing.T) {
			dir := t.TempDir()
			t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
			pidFile := filepath.Join(dir, "rung.pid")
			ladder := `    health:
      - send: echo alive
        expect: alive
        timeout: 1s
    recover:
      - exec: [sh, -c, 'echo $$ > ` + pidFile + `; exec sleep 120']
        timeout: 300s
`
			args := []string{"run", "--json", filepath.Join(dir, "r.json"), "--junit", filepath.Join(dir, "r.xml"), "--html", filepath.Join(dir, "r.html")}
			if pool {
				args = append(args, "--pool", writeFile(t, dir, "lab.pool.yaml", "benches:\n  - name: one\n    sim: true\n"+ladder))
			} else {
				args = append(args, "--sim", "--bench", writeFile(t, dir, "lab.bench.yaml", strings.ReplaceAll(ladder, "\n    ", "\n")[4:]))
			}
			args = append(args,
				writeFile(t, dir, "a.yaml", "name: hang\nsteps:\n  - send: hang\n    expect: hung\n"),
				writeFile(t, dir, "b.yaml", "name: next\nsteps:\n  - send: version\n    expect: hilrun-sim\n"))
			var out, errOut testenv.Buffer
			cmd := exec.Command(hilrunBinary(t), args...)
			cmd.Stdout, cmd.Stderr = &out, &errOut
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var pid int
			waitFor(t, "the rung to start its program", func() bool {
				b, err := os.ReadFile(pidFile)
				pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
				return err == nil && pid > 0
			})
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			if code := cmd.ProcessState.ExitCode(); code != cli.ExitInterrupted {
				t.Fatalf("exit code %d (%v), want 130\nstdout:\n%s\nstderr:\n%s", code, err, out.String(), errOut.String())
			}
			if syscall.Kill(pid, 0) == nil {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Errorf("the rung's program (pid %d) outlived hilrun", pid)
			}
			data, err := os.ReadFile(filepath.Join(dir, "r.json"))
			if err != nil {
				t.Fatalf("no JSON report: %v\n%s\n%s", err, out.String(), errOut.String())
			}
			var rep struct {
				Passed, Interrupted bool
				Sequences           []struct{ Name, Status string }
				Recoveries          []struct {
					Recovered, Interrupted bool
				}
				BadBenches []any `json:"bad_benches"`
			}
			if err := json.Unmarshal(data, &rep); err != nil {
				t.Fatal(err)
			}
			if rep.Passed || !rep.Interrupted || len(rep.Sequences) != 1 || rep.Sequences[0].Name != "hang" || len(rep.Recoveries) != 1 || !rep.Recoveries[0].Interrupted || len(rep.BadBenches) != 0 {
				t.Errorf("the report: %s", data)
			}
			if junit, err := os.ReadFile(filepath.Join(dir, "r.xml")); err != nil || !strings.Contains(string(junit), `<error message="interrupted: interrupted after 1 rung" type="interrupted">`) {
				t.Errorf("the JUnit report does not tell the interrupted climb as an error (%v):\n%s", err, junit)
			}
			checkJUnitSchema(t, filepath.Join(dir, "r.xml"))
			if page, err := os.ReadFile(filepath.Join(dir, "r.html")); err != nil || !strings.Contains(string(page), "<title>INTERRUPTED hang") {
				t.Errorf("the HTML report's title does not say INTERRUPTED (%v)", err)
			}
		})
	}
}
