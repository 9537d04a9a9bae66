package pio

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The tests run this test binary as PlatformIO: TestMain puts a link named
// pio to it first on PATH, and a process started through the link replays
// testdata/<scenario>.txt, the scenario named by HILRUN_FAKE_PIO_SCENARIO.
// A scenario file starts with "# " lines: the first names the PlatformIO
// version whose output it follows, one says "# exit: N". The rest is the
// output. The stand-in appends its arguments, as a JSON line, to the file
// named by HILRUN_FAKE_PIO_ARGV.
const (
	envScenario = "HILRUN_FAKE_PIO_SCENARIO"
	envTestdata = "HILRUN_FAKE_PIO_TESTDATA"
	envArgv     = "HILRUN_FAKE_PIO_ARGV"
)

func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == Tool {
		os.Exit(fakePIO(os.Args[1:]))
	}
	os.Exit(runTests(m))
}

// realPIO is the PlatformIO on PATH before the stand-in was put first;
// "" when there is none.
var realPIO string

func runTests(m *testing.M) int {
	realPIO, _ = exec.LookPath(Tool)
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "find test binary:", err)
		return 1
	}
	bin, err := os.MkdirTemp("", "hilrun-fake-pio-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(bin)
	if err := os.Symlink(exe, filepath.Join(bin, Tool)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	testdata, err := filepath.Abs("testdata")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	os.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	os.Setenv(envTestdata, testdata)
	// Under -race a stand-in would otherwise sleep a second as it exits.
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	return m.Run()
}

// fakePIO replays a scenario and returns its exit code. The scenario
// variable may name several, separated by commas: the stand-in replays the
// first whose "# args:" line equals its arguments ($DIR standing for
// HILRUN_FAKE_PIO_DIR). A scenario without an args line takes any
// arguments; when no scenario takes them, the stand-in rejects the call
// with exit code 97, so a verb that passes other arguments than PlatformIO
// was recorded with fails its test.
func fakePIO(args []string) int {
	if path := os.Getenv(envArgv); path != "" {
		line, _ := json.Marshal(args)
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fake pio:", err)
			return 99
		}
		fmt.Fprintf(f, "%s\n", line)
		f.Close()
	}
	scenarios := os.Getenv(envScenario)
	if scenarios == "" {
		fmt.Fprintln(os.Stderr, "fake pio: no scenario in", envScenario)
		return 99
	}
	for _, scenario := range strings.Split(scenarios, ",") {
		sc, err := readScenario(scenario)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fake pio:", err)
			return 99
		}
		if sc.args != nil && !slices.Equal(sc.args, args) {
			continue
		}
		os.Stdout.WriteString(strings.ReplaceAll(sc.output, "$DIR", os.Getenv(envDir)))
		return sc.exit
	}
	fmt.Fprintf(os.Stderr, "fake pio: unexpected arguments %q: no scenario of %s was recorded with them\n", args, scenarios)
	return exitRejected
}

// exitRejected is the stand-in's exit code for arguments no scenario has.
const exitRejected = 97

// envDir is what $DIR stands for in scenarios.
const envDir = "HILRUN_FAKE_PIO_DIR"

type scenario struct {
	args   []string
	exit   int
	output string
}

func readScenario(name string) (*scenario, error) {
	b, err := os.ReadFile(filepath.Join(os.Getenv(envTestdata), name+".txt"))
	if err != nil {
		return nil, err
	}
	sc, rest := &scenario{}, string(b)
	for strings.HasPrefix(rest, "# ") {
		line, after, _ := strings.Cut(rest, "\n")
		rest = after
		if v, ok := strings.CutPrefix(line, "# exit: "); ok {
			if sc.exit, err = strconv.Atoi(v); err != nil {
				return nil, fmt.Errorf("%s: bad exit line %q", name, line)
			}
		}
		if v, ok := strings.CutPrefix(line, "# args: "); ok {
			if err := json.Unmarshal([]byte(v), &sc.args); err != nil {
				return nil, fmt.Errorf("%s: bad args line %q: %w", name, line, err)
			}
			dir := os.Getenv(envDir)
			for i, a := range sc.args {
				sc.args[i] = strings.ReplaceAll(a, "$DIR", dir)
			}
		}
	}
	sc.output = rest
	return sc, nil
}

// useScenario makes the stand-in replay scenario and returns a function
// giving the argument vectors it was run with.
func useScenario(t *testing.T, scenario string) func() [][]string {
	t.Helper()
	argvFile := filepath.Join(t.TempDir(), "argv")
	t.Setenv(envScenario, scenario)
	t.Setenv(envArgv, argvFile)
	t.Setenv(envDir, "")
	return func() [][]string {
		t.Helper()
		b, err := os.ReadFile(argvFile)
		if os.IsNotExist(err) {
			return nil
		}
		if err != nil {
			t.Fatal(err)
		}
		var calls [][]string
		for line := range strings.Lines(string(b)) {
			var argv []string
			if err := json.Unmarshal([]byte(line), &argv); err != nil {
				t.Fatal(err)
			}
			calls = append(calls, argv)
		}
		return calls
	}
}

// sourceRef is a commit or a documentation address in a .source file.
var sourceRef = regexp.MustCompile(`\b[0-9a-f]{40}\b|https://docs\.platformio\.org/`)

// TestScenarioHeaders checks every scenario names the PlatformIO version
// its output follows and the exit code.
func TestScenarioHeaders(t *testing.T) {
	paths, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			first, _, _ := strings.Cut(string(b), "\n")
			if !strings.HasPrefix(first, "# PlatformIO Core 6.1.") {
				t.Errorf("first line %q does not name the PlatformIO version", first)
			}
			if !strings.Contains(string(b), "\n# exit: ") {
				t.Error("no # exit: line")
			}
			// The build and upload scenarios serve tests that check the
			// arguments themselves; every other one checks them in the
			// stand-in.
			name := strings.TrimSuffix(filepath.Base(p), ".txt")
			legacy := strings.HasPrefix(name, "build_") || strings.HasPrefix(name, "upload_") || name == "clean"
			if !legacy && !strings.Contains(string(b), "\n# args: [") {
				t.Error("no # args: line: the stand-in could not reject other arguments")
			}
			src, err := os.ReadFile(strings.TrimSuffix(p, ".txt") + ".source")
			if err != nil {
				t.Fatalf("no .source file citing where the output comes from: %v", err)
			}
			if !strings.Contains(string(src), "platformio/") || !sourceRef.Match(src) {
				t.Errorf(".source names no PlatformIO file with its commit or page: %s", src)
			}
		})
	}
}
