package pio

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/build"
)

// project makes a project directory; with elf it holds
// .pio/build/esp32dev/firmware.elf, a copy of the virtual board's image.
func project(t *testing.T, elf bool) string {
	t.Helper()
	dir := t.TempDir()
	if !elf {
		return dir
	}
	b, err := os.ReadFile("../../firmware/sim/sim.elf")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, ".pio", "build", "esp32dev")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "firmware.elf"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestBuild(t *testing.T) {
	pioSizes := build.Sizes{
		FlashBytes: 329301, FlashTotal: 1310720, FlashPercent: 25.1,
		RAMBytes: 21312, RAMTotal: 327680, RAMPercent: 6.5,
	}
	tests := []struct {
		name      string
		scenario  string
		verbose   bool
		elf       bool
		wantOK    bool
		class     build.Class
		summary   string
		position  string
		wantSizes func(dir string) *build.Sizes
	}{
		{
			name: "success", scenario: "build_success", wantOK: true,
			summary:   "flash 329301/1310720 bytes (25.1%), ram 21312/327680 bytes (6.5%)",
			wantSizes: func(string) *build.Sizes { s := pioSizes; return &s },
		},
		{
			name: "success with firmware.elf", scenario: "build_success", verbose: true, elf: true, wantOK: true,
			summary: "flash 329301/1310720 bytes (25.1%), ram 21312/327680 bytes (6.5%)",
			wantSizes: func(dir string) *build.Sizes {
				s := pioSizes
				s.Text, s.Data, s.BSS = 540, 24, 2072
				s.ELF = filepath.Join(dir, ".pio", "build", "esp32dev", "firmware.elf")
				return &s
			},
		},
		{
			name: "dram overflow", scenario: "build_overflow", class: build.MemoryOverflow,
			summary: "region `dram0_0_seg' overflowed by 123 bytes",
		},
		{
			name: "missing header", scenario: "build_missing_header", class: build.MissingHeader,
			summary: "missing header hilrun_sensor.h (src/main.cpp:3:10)", position: "src/main.cpp:3:10",
		},
		{
			name: "missing package", scenario: "build_missing_package", class: build.MissingPackage,
			summary: "Error: Could not find the package with 'platformio/espressif32 @ 99.0.0' requirements for your system 'linux_x86_64'",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := useScenario(t, tt.scenario)
			dir := project(t, tt.elf)
			var lines int
			res, err := Build(context.Background(), BuildSpec{ProjectDir: dir, Env: "esp32dev", Verbose: tt.verbose},
				build.Options{Runner: hostRunner, Progress: func(string) { lines++ }})
			if err != nil {
				t.Fatal(err)
			}
			wantArgv := []string{"run", "-d", dir, "-e", "esp32dev"}
			if tt.verbose {
				wantArgv = append(wantArgv, "-v")
			}
			if got := calls(); len(got) != 1 || !slices.Equal(got[0], wantArgv) {
				t.Errorf("pio ran with %q, want %q", got, wantArgv)
			}
			if res.OK != tt.wantOK || res.Class != tt.class {
				t.Errorf("ok %v class %q, want %v %q", res.OK, res.Class, tt.wantOK, tt.class)
			}
			if res.Summary != tt.summary {
				t.Errorf("summary = %q, want %q", res.Summary, tt.summary)
			}
			if got := res.Diagnostic.Position(); got != tt.position {
				t.Errorf("diagnostic at %q, want %q", got, tt.position)
			}
			if tt.wantSizes != nil {
				// JSON leaves out how the sizes were found.
				got, _ := json.Marshal(res.Sizes)
				want, _ := json.Marshal(tt.wantSizes(dir))
				if string(got) != string(want) {
					t.Errorf("sizes = %s\nwant %s", got, want)
				}
				d := res.Data()
				if d["flash_bytes"] != 329301 || d["ram_percent"] != 6.5 {
					t.Errorf("step data flash_bytes %v ram_percent %v", d["flash_bytes"], d["ram_percent"])
				}
			}
			if lines == 0 {
				t.Error("no progress lines")
			}
		})
	}
}

func TestUpload(t *testing.T) {
	tests := []struct {
		name     string
		scenario string
		port     string
		wantOK   bool
		class    build.Class
		summary  string
	}{
		{name: "success", scenario: "upload_success", port: "/dev/ttyUSB0", wantOK: true,
			summary: "flash 329301/1310720 bytes (25.1%), ram 21312/327680 bytes (6.5%)"},
		{name: "port busy", scenario: "upload_port_busy", port: "/dev/ttyUSB0", class: build.PortBusy,
			summary: "([Errno 16] could not open port /dev/ttyUSB0: [Errno 16] Device or resource busy: '/dev/ttyUSB0')"},
		{name: "no answer", scenario: "upload_no_connect", port: "/dev/ttyUSB0", class: build.UploadFailed,
			summary: "A fatal error occurred: Failed to connect to ESP32: No serial data received."},
		{name: "no port", scenario: "upload_no_port", class: build.PortNotFound,
			summary: "Error: Please specify `upload_port` for environment or use global `--upload-port` option."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := useScenario(t, tt.scenario)
			dir := project(t, false)
			res, err := Upload(context.Background(), UploadSpec{ProjectDir: dir, Env: "esp32dev", Port: tt.port}, build.Options{Runner: hostRunner})
			if err != nil {
				t.Fatal(err)
			}
			wantArgv := []string{"run", "-d", dir, "-e", "esp32dev", "-t", "upload"}
			if tt.port != "" {
				wantArgv = append(wantArgv, "--upload-port", tt.port)
			}
			if got := calls(); len(got) != 1 || !slices.Equal(got[0], wantArgv) {
				t.Errorf("pio ran with %q, want %q", got, wantArgv)
			}
			if res.OK != tt.wantOK || res.Class != tt.class || res.Summary != tt.summary {
				t.Errorf("ok %v class %q summary %q, want %v %q %q", res.OK, res.Class, res.Summary, tt.wantOK, tt.class, tt.summary)
			}
		})
	}
}

func TestClean(t *testing.T) {
	calls := useScenario(t, "clean")
	dir := project(t, false)
	res, err := Clean(context.Background(), CleanSpec{ProjectDir: dir, Env: "esp32dev"}, build.Options{Runner: hostRunner})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"run", "-d", dir, "-e", "esp32dev", "-t", "clean"}
	if got := calls(); len(got) != 1 || !slices.Equal(got[0], want) {
		t.Errorf("pio ran with %q, want %q", got, want)
	}
	if !res.OK || res.Summary != "pio succeeded" || !strings.Contains(res.Tail, "Done cleaning") {
		t.Errorf("result = %+v", res)
	}
}

func TestDeviceList(t *testing.T) {
	calls := useScenario(t, "device_list")
	devs, err := DeviceList(context.Background(), build.Options{Runner: hostRunner})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := calls(), [][]string{{"device", "list", "--json-output"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("pio ran with %q, want %q", got, want)
	}
	want := []Device{
		{Port: "/dev/ttyS0", Description: "n/a", HWID: "n/a"},
		{Port: "/dev/ttyUSB0", Description: "CP2102 USB to UART Bridge Controller - CP2102 USB to UART Bridge Controller",
			HWID: "USB VID:PID=10C4:EA60 SER=0001 LOCATION=1-1.2:1.0", VID: "10C4", PID: "EA60", Serial: "0001"},
		{Port: "/dev/ttyACM0", Description: "STM32 STLink - ST-Link VCP Ctrl",
			HWID: "USB VID:PID=0483:374B SER=066DFF485671664867183023 LOCATION=1-1.3:1.2", VID: "0483", PID: "374B", Serial: "066DFF485671664867183023"},
	}
	if !reflect.DeepEqual(devs, want) {
		t.Errorf("devices = %+v\nwant %+v", devs, want)
	}
}

func TestProjectConfig(t *testing.T) {
	calls := useScenario(t, "project_config")
	dir := project(t, false)
	t.Setenv(envDir, dir)
	cfg, err := ProjectConfig(context.Background(), dir, build.Options{Runner: hostRunner})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := calls(), [][]string{{"project", "config", "-d", dir, "--json-output"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("pio ran with %q, want %q", got, want)
	}
	if got, want := cfg.Envs(), []string{"esp32dev", "nucleo_f401re"}; !slices.Equal(got, want) {
		t.Errorf("Envs() = %q, want %q", got, want)
	}
	tests := []struct {
		section, option string
		want            any
		ok              bool
	}{
		{"env:esp32dev", "board", "esp32dev", true},
		{"env:esp32dev", "lib_deps", []any{"bblanchon/ArduinoJson@^7.0.4"}, true},
		{"env", "monitor_speed", float64(115200), true},
		{"platformio", "default_envs", []any{"esp32dev"}, true},
		{"env:nucleo_f401re", "upload_port", nil, false},
		{"env:missing", "board", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.section+"/"+tt.option, func(t *testing.T) {
			got, ok := cfg.Get(tt.section, tt.option)
			if ok != tt.ok || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Get = %v, %v; want %v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

// jsonRunner answers a JSON query with canned output.
type jsonRunner struct {
	out  string
	exit int
}

var _ build.Runner = jsonRunner{}

func (j jsonRunner) Run(_ context.Context, _ []string, _ string, _ []string, out io.Writer) (int, error) {
	_, err := out.Write([]byte(j.out))
	return j.exit, err
}

func TestRunJSON(t *testing.T) {
	tests := []struct {
		name    string
		out     string
		exit    int
		want    []Device
		wantErr string
	}{
		{
			name: "notice before the answer",
			out:  "*** Obsolete PIO Core v6.1.14 is used (previous was 6.1.15)\n[{\"port\": \"/dev/ttyACM0\", \"description\": \"n/a\", \"hwid\": \"n/a\"}]\n",
			want: []Device{{Port: "/dev/ttyACM0", Description: "n/a", HWID: "n/a"}},
		},
		{name: "empty list", out: "[]\n", want: []Device{}},
		{name: "no json", out: "Usage: pio device list [OPTIONS]\n", wantErr: "no JSON"},
		{name: "broken json", out: "[{\"port\": \n", wantErr: "decode"},
		{name: "failed", out: "Error: No such command 'device'.\n", exit: 2, wantErr: "exit code 2: Error: No such command 'device'."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			devs, err := DeviceList(context.Background(), build.Options{Runner: jsonRunner{tt.out, tt.exit}})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(devs, tt.want) {
				t.Errorf("devices = %+v, want %+v", devs, tt.want)
			}
		})
	}
}

func TestNotInstalled(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	ctx := context.Background()
	calls := []struct {
		name string
		call func() error
	}{
		{"build", func() error { _, err := Build(ctx, BuildSpec{}, build.Options{Runner: hostRunner}); return err }},
		{"upload", func() error { _, err := Upload(ctx, UploadSpec{}, build.Options{Runner: hostRunner}); return err }},
		{"clean", func() error { _, err := Clean(ctx, CleanSpec{}, build.Options{Runner: hostRunner}); return err }},
		{"device list", func() error { _, err := DeviceList(ctx, build.Options{Runner: hostRunner}); return err }},
		{"project config", func() error { _, err := ProjectConfig(ctx, "", build.Options{Runner: hostRunner}); return err }},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			err := c.call()
			if !errors.Is(err, exec.ErrNotFound) {
				t.Fatalf("err = %v, want it to wrap exec.ErrNotFound", err)
			}
			if !strings.Contains(err.Error(), "pio is not installed (install PlatformIO Core") {
				t.Errorf("err = %q, want it to say how to install PlatformIO", err)
			}
		})
	}
}
