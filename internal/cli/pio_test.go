package cli_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/internal/cli"
	"github.com/hilrun/hilrun/pkg/gate/environ"
	"github.com/hilrun/hilrun/pkg/gate/process"
	"github.com/hilrun/hilrun/pkg/pio"
	"github.com/hilrun/hilrun/pkg/pio/piotest"
)

func pioProject(t *testing.T, envs ...string) string {
	t.Helper()
	piotest.Note(t)
	dir := t.TempDir()
	ini := "[platformio]\n"
	for _, e := range envs {
		ini += "[env:" + e + "]\nboard = " + e + "\n"
	}
	if err := os.WriteFile(filepath.Join(dir, "platformio.ini"), []byte(ini), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestPIOVerbs(t *testing.T) {
	dir := pioProject(t, "uno", "esp32dev")
	tests := []struct {
		name      string
		args      []string
		scenarios []string
		code      int
		out       string
	}{
		{"boards", []string{"list_boards", "uno"}, []string{"boards_uno"}, 0, "uno_wifi_rev2  ATMEGA4809"},
		{"board", []string{"get-board-info", "uno"}, []string{"boards_uno"}, 0, "flash: 32256 bytes"},
		{"unknown board", []string{"get_board_info", "no-such-board"}, []string{"boards_none"}, cli.ExitInvalid, ""},
		{"devices", []string{"list-devices"}, []string{"device_list"}, 0, "Silicon Labs CP210x UART bridge"},
		{"check", []string{"check-project", "-d", dir, "-e", "uno"}, []string{"check"}, cli.ExitFailed, "src/main.cpp:21:12: medium: Uninitialized variable: count [uninitvar]"},
		{"check unknown env", []string{"check-project", "-d", dir, "-e", "due"}, []string{"check"}, cli.ExitInvalid, ""},
		{"check no project", []string{"check_project", "-d", t.TempDir()}, []string{"check"}, cli.ExitInvalid, ""},
		{"tests", []string{"run-tests", "-d", dir, "-e", "uno"}, []string{"test"}, cli.ExitFailed, "uno:test_ring/test_ring_wrap FAILED: Expected 4 Was 0 (test/test_ring/test_main.c:42)"},
		{"tests no report", []string{"run_tests", "-d", dir, "-e", "uno"}, []string{"test_build_error"}, cli.ExitInfra, ""},
		{"search", []string{"search-libraries", "onewire"}, []string{"pkg_search"}, 0, "paulstoffregen/OneWire@2.3.8"},
		{"list libs", []string{"list-installed-libraries", "-d", dir}, []string{"pkg_list"}, 0, "  esp32dev: OneWire@2.3.8"},
		{"install", []string{"install-library", "-d", dir, "-e", "esp32dev", "bblanchon/ArduinoJson@^7.0.4"}, []string{"pkg_install"}, 0, "has been installed!"},
		{"system", []string{"system_info"}, []string{"system_info"}, 0, "PlatformIO Core"},
		{"out of scope", []string{"remote", "agent", "start"}, nil, cli.ExitInvalid, ""},
		{"upgrade", []string{"upgrade"}, nil, cli.ExitInvalid, ""},
		{"uploadfs", []string{"upload-filesystem", "-d", dir, "-e", "esp32dev"}, []string{"uploadfs"}, 0, "Hash of data verified."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &piotest.Replay{Scenarios: tt.scenarios, Dir: dir}
			var out, errOut bytes.Buffer
			code := cli.MainIO(append([]string{"pio"}, tt.args...), &cli.IO{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, PIO: r})
			if code != tt.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, out.String(), errOut.String())
			}
			if !strings.Contains(out.String(), tt.out) {
				t.Errorf("stdout %q lacks %q", out.String(), tt.out)
			}
			// Only a board's existence is looked up before an error.
			if code == cli.ExitInvalid && len(r.Calls()) != 0 && r.Calls()[0][0] != "boards" {
				t.Errorf("pio ran for invalid input: %q", r.Calls())
			}
		})
	}
}

func TestPIOJSON(t *testing.T) {
	dir := pioProject(t, "uno")
	var out, errOut bytes.Buffer
	r := &piotest.Replay{Scenarios: []string{"test"}, Dir: dir}
	code := cli.MainIO([]string{"pio", "run_tests", "--json", "-d", dir, "-e", "uno"}, &cli.IO{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, PIO: r})
	if code != cli.ExitFailed {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var rep pio.TestReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || rep.Cases != 3 {
		t.Fatalf("report %+v, %v: %s", rep, err, out.String())
	}
}

func TestPIONotInstalled(t *testing.T) {
	var out, errOut bytes.Buffer
	code := cli.MainIO([]string{"pio", "system_info"}, &cli.IO{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, PIO: pio.Exec{Tool: "hilrun-no-such-pio", Runner: process.Runner{Policy: process.Permit(environ.Host())}}})
	if code != cli.ExitInfra || !strings.Contains(errOut.String(), "pipx install platformio") {
		t.Errorf("exit %d, stderr %q", code, errOut.String())
	}
}

// TestPIOVerbNames checks that the verbs are kebab-case on the command
// line, as the rest of hilrun's commands and flags are, and that the MCP
// tools' snake_case names still work as aliases.
func TestPIOVerbNames(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := cli.MainIO([]string{"pio", "--help"}, &cli.IO{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}); code != 0 {
		t.Fatalf("pio --help exited %d: %s", code, errOut.String())
	}
	for _, verb := range []string{"list-boards", "check-project", "run-tests", "list-installed-libraries", "system-info"} {
		if !strings.Contains(out.String(), "\n  "+verb+" ") {
			t.Errorf("pio --help does not list %s:\n%s", verb, out.String())
		}
	}
	if strings.Contains(out.String(), "\n  check_project ") {
		t.Errorf("pio --help lists the snake_case name as a command:\n%s", out.String())
	}
	out.Reset()
	errOut.Reset()
	code := cli.MainIO([]string{"pio", "run-tests", "--bogus"}, &cli.IO{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	if code != cli.ExitInvalid || !strings.Contains(errOut.String(), "unknown flag: --bogus") {
		t.Errorf("pio run-tests --bogus: exit %d, %s", code, errOut.String())
	}
}
