package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/internal/cli"
	"github.com/hilrun/hilrun/pkg/pio/piotest"
)

// fakePIOScript puts a pio on PATH that replays the recording scenario
// (pkg/pio/testdata) when called with exactly its arguments, and rejects
// any other call with exit code 97.
func fakePIOScript(t *testing.T, scenario, dir string, args ...string) {
	t.Helper()
	bin := t.TempDir()
	fixture := filepath.Join(piotest.Testdata(), scenario+".txt")
	b, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	exit := "0"
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "# exit: "); ok {
			exit = v
			break
		}
	}
	script := "#!/bin/sh\n" +
		"[ \"$*\" = '" + strings.Join(args, " ") + "' ] || { echo \"fake pio: unexpected arguments $*\" >&2; exit 97; }\n" +
		"sed -e '1,/^# exit:/d' -e 's#[$]DIR#" + dir + "#g' '" + fixture + "'\n" +
		"exit " + exit + "\n"
	if err := os.WriteFile(filepath.Join(bin, "pio"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// TestPIOTestStep runs a sequence whose pio_test step runs on-target Unity
// tests (PlatformIO replayed), and finds each test case in the JUnit file.
func TestPIOTestStep(t *testing.T) {
	proj := pioProject(t, "uno")
	fakePIOScript(t, "test", proj, "test", "-d", proj, "-e", "uno", "--json-output")
	seq := writeFile(t, t.TempDir(), "seq.yaml", `
name: unit-on-target
steps:
  - pio_test: {project_dir: `+proj+`, env: uno}
  - delay: 1ms
`)
	var stdout, stderr bytes.Buffer
	junit := filepath.Join(t.TempDir(), "junit.xml")
	code := cli.Main([]string{"run", "--junit", junit, seq}, strings.NewReader(""), &stdout, &stderr)
	if code != cli.ExitFailed {
		t.Fatalf("exit %d, want 1 (a failing test case)\n%s\n%s", code, stdout.String(), stderr.String())
	}
	x, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`name="00 pio_test pio ` + proj + ` -e uno: 1 test_ring/test_ring_push"`,
		`name="00 pio_test pio ` + proj + ` -e uno: 2 test_ring/test_ring_wrap"`,
		`<failure message="Expected 4 Was 0" type="failed"`,
		`test/test_ring/test_main.c:42: Expected 4 Was 0`,
		`name="00 pio_test pio ` + proj + ` -e uno: 3 test_ring/test_ring_dma"`,
		`name="01 delay`,
	} {
		if !strings.Contains(string(x), want) {
			t.Errorf("the JUnit report lacks %q:\n%s", want, x)
		}
	}
}

// TestPIOTestStepInvalid checks that a pio_test step naming an environment
// the project lacks is invalid input, found before anything runs.
func TestPIOTestStepInvalid(t *testing.T) {
	proj := pioProject(t, "uno")
	fakePIOScript(t, "test", proj, "never")
	seq := writeFile(t, t.TempDir(), "seq.yaml", "steps:\n  - pio_test: {project_dir: "+proj+", env: due}\n")
	var stdout, stderr bytes.Buffer
	code := cli.Main([]string{"run", seq}, strings.NewReader(""), &stdout, &stderr)
	if code != cli.ExitInvalid || !strings.Contains(stderr.String(), `seq.yaml:2:5: pio_test: project `+proj+` has no environment "due" (it has uno)`) {
		t.Errorf("exit %d, stderr %s", code, stderr.String())
	}
}
