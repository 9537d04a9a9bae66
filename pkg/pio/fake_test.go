package pio

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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

func runTests(m *testing.M) int {
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

// fakePIO replays a scenario and returns its exit code.
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
	scenario := os.Getenv(envScenario)
	if scenario == "" {
		fmt.Fprintln(os.Stderr, "fake pio: no scenario in", envScenario)
		return 99
	}
	b, err := os.ReadFile(filepath.Join(os.Getenv(envTestdata), scenario+".txt"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake pio:", err)
		return 99
	}
	exit, rest := 0, string(b)
	for strings.HasPrefix(rest, "# ") {
		line, after, _ := strings.Cut(rest, "\n")
		rest = after
		if v, ok := strings.CutPrefix(line, "# exit: "); ok {
			if exit, err = strconv.Atoi(v); err != nil {
				fmt.Fprintln(os.Stderr, "fake pio: bad exit line:", line)
				return 99
			}
		}
	}
	os.Stdout.WriteString(rest)
	return exit
}

// useScenario makes the stand-in replay scenario and returns a function
// giving the argument vectors it was run with.
func useScenario(t *testing.T, scenario string) func() [][]string {
	t.Helper()
	argvFile := filepath.Join(t.TempDir(), "argv")
	t.Setenv(envScenario, scenario)
	t.Setenv(envArgv, argvFile)
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
		})
	}
}
