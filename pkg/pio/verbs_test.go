package pio

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/testenv"
)

// pioProject makes a project folder with a platformio.ini of envs and
// makes it what $DIR stands for in scenarios.
func pioProject(t *testing.T, envs ...string) string {
	t.Helper()
	dir := t.TempDir()
	var ini strings.Builder
	ini.WriteString("[platformio]\n")
	for _, e := range envs {
		ini.WriteString("\n[env:" + e + "]\nplatform = x\nboard = " + e + "\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "platformio.ini"), []byte(ini.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(envDir, dir)
	return dir
}

// replay is a client of the stand-in, logging that it is one.
func replay(t *testing.T) *Client {
	t.Helper()
	if realPIO == "" && testenv.CI() {
		t.Log("REPLAY FALLBACK: no real pio on PATH under CI=true; PlatformIO cannot be installed here, so this test runs on recorded outputs (testdata/*.txt, sources in *.source)")
	}
	return &Client{Runner: Exec{Runner: hostRunner}}
}

func TestListBoards(t *testing.T) {
	calls := useScenario(t, "boards_uno")
	boards, err := replay(t).ListBoards(context.Background(), "uno")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := calls(), [][]string{{"boards", "--json-output", "uno"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("pio ran with %q, want %q", got, want)
	}
	if len(boards) != 3 {
		t.Fatalf("%d boards, want 3: %+v", len(boards), boards)
	}
	want := Board{ID: "uno", Name: "Arduino Uno", Platform: "atmelavr", MCU: "ATMEGA328P", FCPU: 16000000, RAM: 2048, ROM: 32256,
		Frameworks: []string{"arduino"}, Vendor: "Arduino", URL: "https://www.arduino.cc/en/Main/ArduinoBoardUno", DebugTools: []string{"avr-stub", "simavr"}}
	if !reflect.DeepEqual(boards[0], want) {
		t.Errorf("boards[0] = %+v\nwant %+v", boards[0], want)
	}
	if got := boards[2].Connectivity; !slices.Equal(got, []string{"wifi", "bluetooth"}) {
		t.Errorf("connectivity = %q", got)
	}
}

func TestBoardInfo(t *testing.T) {
	useScenario(t, "boards_uno,boards_none")
	b, err := replay(t).BoardInfo(context.Background(), "uno")
	if err != nil {
		t.Fatal(err)
	}
	// uno_mini and uno_wifi_rev2 mention "uno" too; only the exact id counts.
	if b.Name != "Arduino Uno" {
		t.Errorf("board = %+v", b)
	}
}

func TestBoardInfoUnknown(t *testing.T) {
	useScenario(t, "boards_uno,boards_none")
	for _, id := range []string{"no-such-board", ""} {
		_, err := replay(t).BoardInfo(context.Background(), id)
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("BoardInfo(%q) = %v, want ErrInvalid", id, err)
		}
	}
}

func TestListDevicesBoards(t *testing.T) {
	useScenario(t, "device_list")
	devs, err := replay(t).ListDevices(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var boards []string
	for _, d := range devs {
		boards = append(boards, d.Board)
	}
	if want := []string{"", "Silicon Labs CP210x UART bridge", "ST-Link/V2-1 VCP (STM32 Nucleo/Discovery)"}; !slices.Equal(boards, want) {
		t.Errorf("boards = %q, want %q", boards, want)
	}
}

func TestInitProject(t *testing.T) {
	calls := useScenario(t, "boards_uno,project_init")
	dir := filepath.Join(t.TempDir(), "blink")
	t.Setenv(envDir, dir)
	out, err := replay(t).InitProject(context.Background(), InitSpec{ProjectDir: dir, Board: "uno", Framework: "arduino"})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"boards", "--json-output", "uno"}, {"project", "init", "-d", dir, "-b", "uno", "-O", "framework=arduino"}}
	if got := calls(); !reflect.DeepEqual(got, want) {
		t.Errorf("pio ran with %q, want %q", got, want)
	}
	if !strings.Contains(out.Text, "Project has been successfully initialized!") || !strings.Contains(out.Text, dir) {
		t.Errorf("output = %q", out.Text)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Errorf("project folder not made: %v", err)
	}
}

func TestInitProjectUnknownBoard(t *testing.T) {
	calls := useScenario(t, "boards_none")
	dir := filepath.Join(t.TempDir(), "blink")
	_, err := replay(t).InitProject(context.Background(), InitSpec{ProjectDir: dir, Board: "no-such-board"})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `unknown board "no-such-board"`) {
		t.Fatalf("err = %v", err)
	}
	if got := calls(); len(got) != 1 || got[0][0] != "boards" {
		t.Errorf("pio ran with %q: only the board lookup may run", got)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Error("the project folder was made for an unknown board")
	}
}

func TestGetProjectConfig(t *testing.T) {
	useScenario(t, "project_config")
	dir := pioProject(t, "esp32dev", "nucleo_f401re")
	cfg, err := replay(t).GetProjectConfig(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Envs(); !slices.Equal(got, []string{"esp32dev", "nucleo_f401re"}) {
		t.Errorf("envs = %q", got)
	}
}

// TestBeforeRun checks that a project without platformio.ini and an
// unknown environment are refused before pio runs.
func TestBeforeRun(t *testing.T) {
	calls := useScenario(t, "check")
	dir := pioProject(t, "uno")
	ctx := context.Background()
	c := replay(t)
	empty := t.TempDir()
	tests := []struct {
		name string
		run  func() error
		want string
	}{
		{"no platformio.ini", func() error { _, _, err := c.CheckProjectDefects(ctx, empty, ""); return err }, "has no platformio.ini"},
		{"unknown env", func() error { _, _, err := c.CheckProjectDefects(ctx, dir, "esp32"); return err }, `has no environment "esp32" (it has uno)`},
		{"test unknown env", func() error { _, _, err := c.Test(ctx, TestSpec{ProjectDir: dir, Env: "due"}); return err }, `no environment "due"`},
		{"clean no project", func() error { _, err := c.RunTarget(ctx, "", "", "clean", ""); return err }, "project_dir is required"},
		{"library flag", func() error { _, err := c.Library(ctx, Install, dir, "", "-g"); return err }, "give a library name"},
		{"library empty", func() error { _, err := c.Library(ctx, Uninstall, dir, "", " "); return err }, "give a library name"},
		{"search empty", func() error { _, err := c.SearchLibraries(ctx, "", 0); return err }, "query is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run()
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want ErrInvalid with %q", err, tt.want)
			}
		})
	}
	if got := calls(); len(got) != 0 {
		t.Errorf("pio ran with %q", got)
	}
}

func TestUploadFilesystem(t *testing.T) {
	useScenario(t, "uploadfs")
	dir := pioProject(t, "esp32dev")
	out, err := replay(t).RunTarget(context.Background(), dir, "esp32dev", "uploadfs", "")
	if err != nil {
		t.Fatal(err)
	}
	if !out.OK() || !strings.Contains(out.Summary(), "[SUCCESS]") {
		t.Errorf("output: ok %v, summary %q", out.OK(), out.Summary())
	}
}

func TestCheckProjectDefects(t *testing.T) {
	useScenario(t, "check")
	dir := pioProject(t, "uno")
	runs, _, err := replay(t).CheckProjectDefects(context.Background(), dir, "uno")
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 {
		t.Fatalf("runs = %+v", runs)
	}
	r := runs[0]
	if r.Env != "uno" || r.Tool != "cppcheck" || !r.Succeeded || r.High != 1 || r.Medium != 1 || r.Low != 1 {
		t.Errorf("run = %+v", r)
	}
	want := Defect{Severity: "high", Category: "error", Message: "Array 'buf[8]' accessed at index 8, which is out of bounds.",
		File: filepath.Join(dir, "src/main.cpp"), Line: 14, Column: 8, ID: "arrayIndexOutOfBounds", CWE: 788}
	if !reflect.DeepEqual(r.Defects[0], want) {
		t.Errorf("defect = %+v\nwant %+v", r.Defects[0], want)
	}
}

func TestCheckProjectFails(t *testing.T) {
	useScenario(t, "check_fail")
	dir := pioProject(t, "uno")
	_, _, err := replay(t).CheckProjectDefects(context.Background(), dir, "uno")
	if err == nil || !strings.Contains(err.Error(), "exit code 1: Error: Could not find the package") {
		t.Fatalf("err = %v", err)
	}
}

func TestRunTests(t *testing.T) {
	var lines []string
	useScenario(t, "test")
	dir := pioProject(t, "uno")
	c := &Client{Runner: Exec{Runner: hostRunner}, Progress: func(l string) { lines = append(lines, l) }}
	replay(t)
	rep, out, err := c.Test(context.Background(), TestSpec{ProjectDir: dir, Env: "uno"})
	if err != nil {
		t.Fatal(err)
	}
	if out.ExitCode != 1 || rep.Passed() {
		t.Errorf("exit %d, passed %v; want 1, false", out.ExitCode, rep.Passed())
	}
	if rep.Cases != 3 || rep.Failures != 1 || rep.Skipped != 1 || len(rep.Suites) != 1 {
		t.Fatalf("report = %+v", rep)
	}
	got := rep.Suites[0].Cases
	want := []TestCase{
		{Name: "test_ring_push", Status: "PASSED", Stdout: "test/test_ring/test_main.c:31:test_ring_push:PASS", File: "test/test_ring/test_main.c", Line: 31},
		{Name: "test_ring_wrap", Status: "FAILED", Message: "Expected 4 Was 0", Stdout: "test/test_ring/test_main.c:42:test_ring_wrap:FAIL: Expected 4 Was 0", File: "test/test_ring/test_main.c", Line: 42},
		{Name: "test_ring_dma", Status: "SKIPPED", Message: "needs DMA", Stdout: "test/test_ring/test_main.c:50:test_ring_dma:IGNORE: needs DMA", File: "test/test_ring/test_main.c", Line: 50},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("cases = %+v\nwant %+v", got, want)
	}
	if !slices.Contains(lines, "test/test_ring/test_main.c:42:test_ring_wrap:FAIL: Expected 4 Was 0") {
		t.Errorf("progress lines miss the failing case: %q", lines)
	}
}

func TestRunTestsNoReport(t *testing.T) {
	useScenario(t, "test_build_error")
	dir := pioProject(t, "uno")
	_, out, err := replay(t).Test(context.Background(), TestSpec{ProjectDir: dir, Env: "uno"})
	if err == nil || !strings.Contains(err.Error(), "exit code 1: Error: Process exited with 1") || out == nil {
		t.Fatalf("err = %v", err)
	}
}

func TestSearchLibraries(t *testing.T) {
	useScenario(t, "pkg_search")
	res, err := replay(t).SearchLibraries(context.Background(), "onewire", 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Total != 61 || res.Page != 1 || res.Pages != 7 || len(res.Libraries) != 3 {
		t.Fatalf("result = %+v", res)
	}
	want := Library{Owner: "paulstoffregen", Name: "OneWire", Type: "Library", Version: "2.3.8", Published: "Fri Jan 19 06:46:43 2024",
		Description: "Control 1-Wire protocol (DS18S20, DS18B20, DS2408 and etc)"}
	if res.Libraries[0] != want {
		t.Errorf("first = %+v\nwant %+v", res.Libraries[0], want)
	}
	useScenario(t, "pkg_search_none")
	res, err = replay(t).SearchLibraries(context.Background(), "name:no-such-lib", 0)
	if err != nil || res.Total != 0 || len(res.Libraries) != 0 {
		t.Errorf("nothing found = %+v, %v", res, err)
	}
}

func TestListLibraries(t *testing.T) {
	useScenario(t, "pkg_list")
	dir := pioProject(t, "esp32dev", "nucleo_f401re")
	libs, err := replay(t).ListLibraries(context.Background(), dir, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []InstalledLibrary{
		{Env: "esp32dev", Name: "ArduinoJson", Version: "7.0.4", Required: "bblanchon/ArduinoJson @ ^7.0.4"},
		{Env: "esp32dev", Name: "DallasTemperature", Version: "3.11.0", Required: "milesburton/DallasTemperature @ ^3.11.0"},
		{Env: "esp32dev", Name: "OneWire", Version: "2.3.8", Required: "paulstoffregen/OneWire @ ^2.3.5", Depth: 1},
	}
	if !reflect.DeepEqual(libs, want) {
		t.Errorf("libraries = %+v\nwant %+v", libs, want)
	}
}

func TestLibraryVerbs(t *testing.T) {
	tests := []struct {
		verb     LibraryVerb
		scenario string
		env      string
		spec     string
		want     string
	}{
		{Install, "pkg_install", "esp32dev", "bblanchon/ArduinoJson@^7.0.4", "ArduinoJson@7.0.4 has been installed!"},
		{Uninstall, "pkg_uninstall", "", "bblanchon/ArduinoJson", "ArduinoJson@7.0.4 has been removed!"},
		{Update, "pkg_update", "", "bblanchon/ArduinoJson", "is already up-to-date"},
	}
	for _, tt := range tests {
		t.Run(string(tt.verb), func(t *testing.T) {
			useScenario(t, tt.scenario)
			dir := pioProject(t, "esp32dev")
			out, err := replay(t).Library(context.Background(), tt.verb, dir, tt.env, tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			if !out.OK() || !strings.Contains(out.Text, tt.want) {
				t.Errorf("exit %d, output %q", out.ExitCode, out.Text)
			}
		})
	}
}

func TestSystemInfo(t *testing.T) {
	useScenario(t, "system_info")
	items, err := replay(t).SystemInfo(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 12 || items[0] != (InfoItem{Key: "core_version", Title: "PlatformIO Core", Value: "6.1.18"}) {
		t.Fatalf("items = %+v", items)
	}
	if last := items[11]; last.Key != "package_tool_nums" || last.Value != "9" {
		t.Errorf("last = %+v", last)
	}
}

// TestFakeRejects proves the stand-in refuses arguments no scenario was
// recorded with, so a verb that changes its arguments fails its test.
func TestFakeRejects(t *testing.T) {
	useScenario(t, "boards_uno")
	_, err := replay(t).ListBoards(context.Background(), "esp32")
	if err == nil || !strings.Contains(err.Error(), "exit code 97") {
		t.Fatalf("ListBoards with unrecorded arguments = %v, want the stand-in's rejection (exit code 97)", err)
	}
	out, err := (&Client{Runner: Exec{Runner: hostRunner}}).run(context.Background(), "", []string{"boards", "--json-output", "uno", "--installed"})
	if err != nil || out.ExitCode != exitRejected || !strings.Contains(out.Text, "unexpected arguments") {
		t.Errorf("extra flag: %+v, %v", out, err)
	}
}

func TestVerbNotInstalled(t *testing.T) {
	c := &Client{Runner: Exec{Tool: "hilrun-no-such-pio", Runner: hostRunner}}
	_, err := c.SystemInfo(context.Background())
	if !errors.Is(err, ErrNotInstalled) || !errors.Is(err, exec.ErrNotFound) || !strings.Contains(err.Error(), "pipx install platformio") {
		t.Fatalf("err = %v, want ErrNotInstalled naming pipx install platformio", err)
	}
}

// TestRealPIO runs the read-only verbs against a real pio when one is on
// PATH: the same parsing, checked for shape (a real PlatformIO's boards
// and devices are not the recorded ones).
func TestRealPIO(t *testing.T) {
	if realPIO == "" {
		if testenv.CI() {
			t.Log("REPLAY FALLBACK: no real pio on PATH under CI=true; the verbs were checked on recorded outputs only")
			return
		}
		t.Skip("no real pio on PATH (pipx install platformio); the verbs were checked on recorded outputs only")
	}
	c := &Client{Runner: Exec{Tool: realPIO, Runner: hostRunner}}
	ctx := context.Background()
	items, err := c.SystemInfo(ctx)
	if err != nil || len(items) == 0 || items[0].Key != "core_version" {
		t.Errorf("system info = %+v, %v", items, err)
	}
	if _, err := c.ListDevices(ctx); err != nil {
		t.Error(err)
	}
	b, err := c.BoardInfo(ctx, "uno")
	if err != nil || b.MCU != "ATMEGA328P" {
		t.Errorf("board uno = %+v, %v", b, err)
	}
}
