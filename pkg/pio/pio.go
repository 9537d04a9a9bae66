// Package pio runs PlatformIO Core for hilrun: `pio run` to build, upload
// and clean a project for the build and upload steps (results are
// build.Results: RAM and Flash use on success, the isolated cause of a
// failure), and the verbs agents and people need around it (Client): boards,
// devices with their likely board, project init and config, the
// filesystem image, static analysis with its defects as data, unit tests
// with every test case, libraries scoped to a project, and system
// information. Every verb runs pio through a Runner, so tests replay
// recorded outputs; global settings, upgrades, account and cloud commands
// and `pio remote` are not offered.
package pio

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/hilrun/hilrun/pkg/build"
	"github.com/hilrun/hilrun/pkg/gate/process"
)

// Tool is the PlatformIO executable looked up on PATH.
const Tool = "pio"

// BuildSpec is `build: {pio: {project_dir, env, verbose}}`.
type BuildSpec struct {
	// ProjectDir holds platformio.ini; "" is the current directory.
	ProjectDir string
	// Env is the platformio.ini environment; "" builds the default ones.
	Env string
	// Verbose passes -v, for the full compiler command lines in the log.
	Verbose bool
}

// UploadSpec is `upload: {pio: {project_dir, env, port}}`.
type UploadSpec struct {
	ProjectDir string
	Env        string
	// Port is the upload port (/dev/ttyUSB0, COM3); "" lets PlatformIO
	// pick one from upload_port or by looking.
	Port    string
	Verbose bool
}

// CleanSpec is a `pio run -t clean` of a project.
type CleanSpec struct {
	ProjectDir string
	Env        string
}

// runArgs is the shared start of every `pio run`.
func runArgs(dir, env string) []string {
	argv := []string{Tool, "run"}
	if dir != "" {
		argv = append(argv, "-d", dir)
	}
	if env != "" {
		argv = append(argv, "-e", env)
	}
	return argv
}

// Build runs `pio run [-d dir] [-e env] [-v]`. On success the Result holds
// PlatformIO's RAM and Flash use with the board's capacities and, when
// Env is given and .pio/build/<env>/firmware.elf exists, the image's text,
// data and bss. A build that fails is a Result with OK false and a nil
// error; the error is for PlatformIO not running at all.
func Build(ctx context.Context, spec BuildSpec, opts build.Options) (*build.Result, error) {
	argv := runArgs(spec.ProjectDir, spec.Env)
	if spec.Verbose {
		argv = append(argv, "-v")
	}
	res, err := build.Run(ctx, argv, "", nil, opts)
	if err != nil {
		return nil, err
	}
	if res.OK && spec.Env != "" {
		elfPath := filepath.Join(spec.ProjectDir, ".pio", "build", spec.Env, "firmware.elf")
		// A project may set its own build_dir; then the output's figures
		// are all there is.
		if e, err := build.ELFSizes(elfPath); err == nil {
			var s build.Sizes
			if res.Sizes != nil {
				s = *res.Sizes
			}
			s = s.WithELF(e)
			res.Sizes = &s
		}
	}
	return res, nil
}

// Upload runs `pio run [-d dir] [-e env] -t upload [--upload-port port]
// [-v]`, which builds first when the image is out of date. Its failures
// classify as PortBusy, PortNotFound or UploadFailed as well as the build
// classes.
func Upload(ctx context.Context, spec UploadSpec, opts build.Options) (*build.Result, error) {
	argv := append(runArgs(spec.ProjectDir, spec.Env), "-t", "upload")
	if spec.Port != "" {
		argv = append(argv, "--upload-port", spec.Port)
	}
	if spec.Verbose {
		argv = append(argv, "-v")
	}
	return build.Run(ctx, argv, "", nil, opts)
}

// Clean runs `pio run [-d dir] [-e env] -t clean`.
func Clean(ctx context.Context, spec CleanSpec, opts build.Options) (*build.Result, error) {
	argv := append(runArgs(spec.ProjectDir, spec.Env), "-t", "clean")
	return build.Run(ctx, argv, "", nil, opts)
}

// Device is a serial port PlatformIO sees.
type Device struct {
	Port        string `json:"port"`
	Description string `json:"description"`
	// HWID is pyserial's hardware ID: "USB VID:PID=10C4:EA60 SER=0001
	// LOCATION=1-1.2", or "n/a" for a port without one.
	HWID string `json:"hwid"`
	// VID, PID and Serial come from HWID; "" when it has none. VID and PID
	// are upper-case hexadecimal, as in HWID.
	VID    string `json:"vid,omitempty"`
	PID    string `json:"pid,omitempty"`
	Serial string `json:"serial,omitempty"`
	// Board is the likely board or adapter for VID:PID; "" when it is not a
	// well-known one.
	Board string `json:"board,omitempty"`
}

var (
	vidPID   = regexp.MustCompile(`VID:PID=([0-9A-Fa-f]{4}):([0-9A-Fa-f]{4})`)
	serialNo = regexp.MustCompile(`\bSER=(\S+)`)
)

// DeviceList runs `pio device list --json-output`.
func DeviceList(ctx context.Context, opts build.Options) ([]Device, error) {
	var devs []Device
	if err := runJSON(ctx, []string{Tool, "device", "list", "--json-output"}, opts, &devs); err != nil {
		return nil, err
	}
	for i := range devs {
		d := &devs[i]
		if m := vidPID.FindStringSubmatch(d.HWID); m != nil {
			d.VID, d.PID = strings.ToUpper(m[1]), strings.ToUpper(m[2])
		}
		if m := serialNo.FindStringSubmatch(d.HWID); m != nil {
			d.Serial = m[1]
		}
	}
	return devs, nil
}

// Config is a project's platformio.ini as PlatformIO reads it, sections
// and options in file order.
type Config struct {
	Sections []Section
}

// Section is one [section] of platformio.ini: "platformio", "env",
// "env:esp32dev".
type Section struct {
	Name    string
	Options []Option
}

// Option is one option with the value PlatformIO parsed: a string, a
// number (float64), a bool, or a list ([]any) for multi-value options such
// as lib_deps and build_flags.
type Option struct {
	Name  string
	Value any
}

// Envs names the project's environments, "env:" dropped, in file order.
func (c *Config) Envs() []string {
	var envs []string
	for _, s := range c.Sections {
		if name, ok := strings.CutPrefix(s.Name, "env:"); ok {
			envs = append(envs, name)
		}
	}
	return envs
}

// Get is the value of option name in section, and whether it is set.
func (c *Config) Get(section, name string) (any, bool) {
	for _, s := range c.Sections {
		if s.Name != section {
			continue
		}
		for _, o := range s.Options {
			if o.Name == name {
				return o.Value, true
			}
		}
	}
	return nil, false
}

// ProjectConfig runs `pio project config -d dir --json-output`.
func ProjectConfig(ctx context.Context, dir string, opts build.Options) (*Config, error) {
	argv := []string{Tool, "project", "config"}
	if dir != "" {
		argv = append(argv, "-d", dir)
	}
	argv = append(argv, "--json-output")
	// PlatformIO prints the configuration as a list of [section, options]
	// pairs, each option a [name, value] pair.
	var raw [][]json.RawMessage
	if err := runJSON(ctx, argv, opts, &raw); err != nil {
		return nil, err
	}
	return configFrom(raw)
}

// parseConfig reads the output of `pio project config --json-output`.
func parseConfig(text []byte) (*Config, error) {
	var raw [][]json.RawMessage
	if err := decodeJSON("pio project config", text, &raw); err != nil {
		return nil, err
	}
	return configFrom(raw)
}

func configFrom(raw [][]json.RawMessage) (*Config, error) {
	cfg := &Config{}
	for i, pair := range raw {
		var sec Section
		var options [][]json.RawMessage
		if len(pair) != 2 || json.Unmarshal(pair[0], &sec.Name) != nil || json.Unmarshal(pair[1], &options) != nil {
			return nil, fmt.Errorf("pio project config: section %d: expected [name, [[option, value], ...]]", i)
		}
		for j, o := range options {
			var opt Option
			if len(o) != 2 || json.Unmarshal(o[0], &opt.Name) != nil || json.Unmarshal(o[1], &opt.Value) != nil {
				return nil, fmt.Errorf("pio project config: section %q, option %d: expected [name, value]", sec.Name, j)
			}
			sec.Options = append(sec.Options, opt)
		}
		cfg.Sections = append(cfg.Sections, sec)
	}
	return cfg, nil
}

// maxJSON bounds the output read for a JSON answer.
const maxJSON = 4 << 20

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	bytes.Buffer
	max  int
	over bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	room := b.max - b.Len()
	if room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	if len(p) > room {
		b.over = true
	}
	return len(p), nil
}

// runJSON runs a PlatformIO command that answers in JSON and decodes the
// answer into v. PlatformIO may print notices (a new version, a deprecated
// option) around it, so decoding starts at the first line that opens a
// JSON array or object.
func runJSON(ctx context.Context, argv []string, opts build.Options, v any) error {
	runner := opts.Runner
	if runner == nil {
		runner = process.Runner{}
	}
	name := strings.Join(argv[:min(len(argv), 3)], " ")
	out := &limitedBuffer{max: maxJSON}
	code, err := runner.Run(ctx, argv, "", nil, out)
	if err != nil {
		if errors.Is(err, process.ErrNotFound) {
			return fmt.Errorf("%s is not installed (install PlatformIO Core: pipx install platformio, or pip install platformio): %w", Tool, err)
		}
		return err
	}
	if code != 0 {
		_, _, summary := build.Classify(out.String())
		if summary == "" {
			summary = "no explanation in its output"
		}
		return fmt.Errorf("%s: exit code %d: %s", name, code, summary)
	}
	return decodeJSON(name, out.Bytes(), v)
}

// decodeJSON decodes the JSON answer in data into v, starting at the first
// line that opens a JSON array or object.
func decodeJSON(name string, data []byte, v any) error {
	start := -1
	for off := 0; off < len(data); {
		line := data[off:]
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line = line[:i+1]
		}
		if t := bytes.TrimLeft(line, " \t"); len(t) > 0 && (t[0] == '[' || t[0] == '{') {
			start = off
			break
		}
		off += len(line)
	}
	if start < 0 {
		return fmt.Errorf("%s: no JSON in its output", name)
	}
	if err := json.NewDecoder(bytes.NewReader(data[start:])).Decode(v); err != nil {
		return fmt.Errorf("%s: decode its JSON output: %w", name, err)
	}
	return nil
}
