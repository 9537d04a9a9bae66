package steps

import (
	"strings"

	"gopkg.in/yaml.v3"
)

// This file holds the kinds that run a build tool: build, upload (a
// command, PlatformIO, or an image written through the probe) and
// pio_test. They share one BuildSpec and its decoding.

// Build step kinds.
const (
	KindBuild  Kind = "build"
	KindUpload Kind = "upload"
	// KindPIOTest runs a PlatformIO project's unit tests (pio test):
	// build, flash, run on the target, one result per test case.
	KindPIOTest Kind = "pio_test"
)

func init() {
	registerKind(KindSpec{
		Kind:    KindBuild,
		Keys:    []string{"build"},
		Caps:    CapHostExec | CapReadFiles,
		Doc:     "run a build tool",
		Allowed: []string{"timeout"},
		decode: func(d *decoder, s *Step, key string, v *yaml.Node) bool {
			if key != "build" {
				return false
			}
			s.Build = d.buildSpec(KindBuild, v)
			return true
		},
		check: checkBuild,
		title: titleBuild,
	})
	registerKind(KindSpec{
		Kind:    KindUpload,
		Keys:    []string{"upload"},
		Caps:    CapHostExec | CapMemWrite | CapReadFiles | CapDevice,
		Doc:     "flash firmware: a tool, PlatformIO, or an image through the probe",
		Note:    "an image through the probe: mem-write+read-files; device only with port:",
		Allowed: []string{"probe", "timeout"},
		caps:    uploadCaps,
		decode: func(d *decoder, s *Step, key string, v *yaml.Node) bool {
			if key != "upload" {
				return false
			}
			s.Build = d.buildSpec(KindUpload, v)
			return true
		},
		finish: func(d *decoder, s *Step, keys stepKeys) {
			if keys.has["probe"] && (s.Build == nil || s.Build.Image == nil) {
				d.add(s.Pos, "probe goes with an openocd: upload")
			}
		},
		check: checkBuild,
		title: titleBuild,
	})
	registerKind(KindSpec{
		Kind:    KindPIOTest,
		Keys:    []string{"pio_test"},
		Caps:    CapHostExec | CapMemWrite | CapReadFiles | CapDevice,
		Doc:     "run a PlatformIO project's unit tests on the target (pio test): each test case a result",
		Note:    "device only with port: or test_port:",
		Allowed: []string{"timeout"},
		caps:    pioTestCaps,
		decode: func(d *decoder, s *Step, key string, v *yaml.Node) bool {
			if key != "pio_test" {
				return false
			}
			s.Build = d.pioTest(v)
			return true
		},
		check: checkBuild,
		title: titleBuild,
	})
}

// checkBuild is validate's look at a build, upload or pio_test step: the
// templates of its command and the device of its port.
func checkBuild(v *validator, s *Step) {
	if b := s.Build; b != nil {
		v.command(s.Pos, b.Command, b.Env, b.Port)
	}
}

// titleBuild says what the step runs.
func titleBuild(s *Step) string { return s.Build.describe() }

// uploadCaps is what one upload does: an image through the probe runs no
// host program, and a tool uses a device only with port: (everything
// when the step could not be decoded).
func uploadCaps(s *Step) Cap {
	b := s.Build
	switch {
	case b == nil:
		return CapHostExec | CapMemWrite | CapReadFiles | CapDevice
	case b.Image != nil:
		return CapMemWrite | CapReadFiles
	}
	c := CapHostExec | CapMemWrite | CapReadFiles
	if b.Port != "" {
		c |= CapDevice
	}
	return c
}

// pioTestCaps is what one pio_test does: it uses a device only with
// port: or test_port: (or when the step could not be decoded).
func pioTestCaps(s *Step) Cap {
	c := CapHostExec | CapMemWrite | CapReadFiles
	if b := s.Build; b == nil || b.Port != "" || b.PIO == nil || b.PIO.Test == nil || b.PIO.Test.TestPort != "" {
		c |= CapDevice
	}
	return c
}

// BuildSpec is what a build or upload step runs: a command, PlatformIO,
// or (upload only) an image written through the probe's OpenOCD session.
type BuildSpec struct {
	// Command is an argument vector; each element may hold ${var}. With
	// Shell it is one string run by sh -c.
	Command []*Template
	Shell   bool
	Dir     string
	Env     map[string]*Template
	// ELF is the image a build makes, for its sizes.
	ELF string

	PIO *PIOSpec

	// Image is written through OpenOCD (upload only).
	Image *ImageSpec

	// Port names the device (or is the port path) the upload goes
	// through; hilrun releases its console for the upload and takes it
	// back afterwards.
	Port string
}

// PIOSpec is a PlatformIO project and environment.
type PIOSpec struct {
	ProjectDir string
	Env        string
	Verbose    bool
	Clean      bool

	// Test holds what a pio_test step adds.
	Test *PIOTestSpec
}

// PIOTestSpec is the test selection of a pio_test step.
type PIOTestSpec struct {
	// Filter and Ignore are test name patterns (pio test -f, -i).
	Filter, Ignore []string
	// TestPort is the port the results come from (--test-port); "" lets
	// PlatformIO use the upload port or test_port.
	TestPort string
	// WithoutUploading runs the tests already on the target.
	WithoutUploading bool
}

// ImageSpec writes an image file through a probe: with OpenOCD's program
// command (flash), or with load_image into RAM (Method "load").
type ImageSpec struct {
	File   string
	Method string // program (default) or load
	Verify bool
	Reset  bool
	Offset uint64
}

// describe says what a build runs: the PlatformIO project, the image, or
// the command.
func (b *BuildSpec) describe() string {
	switch {
	case b == nil:
		return ""
	case b.PIO != nil:
		d := "pio " + b.PIO.ProjectDir
		if b.PIO.Env != "" {
			d += " -e " + b.PIO.Env
		}
		return clip(d)
	case b.Image != nil:
		return clip(b.Image.Method + " " + b.Image.File)
	}
	var parts []string
	for _, t := range b.Command {
		parts = append(parts, t.Raw)
	}
	return clip(strings.Join(parts, " "))
}

// The keys of build: {...}, upload: {...}, their pio: {...} and an
// upload's openocd: {...}.
var (
	buildKeys  = []string{"command", "shell", "dir", "env", "elf", "pio"}
	uploadKeys = []string{"command", "shell", "dir", "env", "pio", "openocd", "port"}
	pioKeys    = []string{"project_dir", "env", "verbose", "clean"}
	imageKeys  = []string{"file", "method", "verify", "reset", "offset"}
)

// buildSpec decodes build: and upload: mappings.
func (d *decoder) buildSpec(kind Kind, n *yaml.Node) *BuildSpec {
	b := &BuildSpec{}
	allowed := buildKeys
	if kind == KindUpload {
		allowed = uploadKeys
	}
	if n.Kind != yaml.MappingNode {
		d.add(d.pos(n), "%s must be a mapping such as {command: [make, -C, firmware]} or {pio: {project_dir: fw}}, found %s", kind, kindName(n))
		return b
	}
	ways := 0
	for _, p := range d.pairs(n) {
		k := p.key.Value
		known := false
		for _, a := range allowed {
			known = known || a == k
		}
		if !known {
			d.unknownKey(p.key, string(kind), allowed)
			continue
		}
		switch k {
		case "command":
			ways++
			for _, s := range d.strings(p.val, "command") {
				t, err := ParseTemplate(s)
				if err != nil {
					d.add(d.pos(p.val), "command: %v", err)
					continue
				}
				b.Command = append(b.Command, &t)
			}
			if len(b.Command) == 0 {
				d.add(d.pos(p.val), "command must not be empty")
			}
		case "shell":
			b.Shell, _ = d.boolean(p.val, "shell")
		case "dir":
			if s, ok := d.str(p.val, "dir"); ok {
				b.Dir = d.relPath(s)
			}
		case "env":
			b.Env = d.env(p.val)
		case "elf":
			if s, ok := d.str(p.val, "elf"); ok {
				b.ELF = s
			}
		case "pio":
			ways++
			b.PIO = d.pio(p.val)
		case "openocd":
			ways++
			b.Image = d.image(p.val)
		case "port":
			b.Port, _ = d.str(p.val, "port")
		}
	}
	switch {
	case ways == 0 && kind == KindUpload:
		d.add(d.pos(n), "upload needs command:, pio: or openocd:")
	case ways == 0:
		d.add(d.pos(n), "build needs command: or pio:")
	case ways > 1 && kind == KindUpload:
		d.add(d.pos(n), "upload takes one of command:, pio: or openocd:")
	case ways > 1:
		d.add(d.pos(n), "build takes one of command: or pio:")
	case b.PIO != nil && (b.Shell || b.Dir != "" || len(b.Env) > 0 || b.ELF != ""):
		d.add(d.pos(n), "shell, dir, env and elf go with command:; PlatformIO takes its project from pio: {project_dir: ...}")
	case b.Image != nil && (b.Shell || b.Dir != "" || len(b.Env) > 0 || b.Port != ""):
		d.add(d.pos(n), "an openocd upload writes through the probe: shell, dir, env and port go with command: or pio:")
	case kind == KindUpload && b.PIO != nil && b.PIO.Clean:
		d.add(d.pos(n), "clean is for a pio build, not an upload")
	}
	if b.Shell && len(b.Command) != 1 {
		d.add(d.pos(n), "with shell: true, command is one string for sh -c")
	}
	// A command runs in the sequence file's folder unless dir says
	// otherwise, so its relative paths and elf mean the same thing
	// whatever folder hilrun runs in.
	if len(b.Command) > 0 && b.Dir == "" {
		b.Dir = d.relPath(".")
	}
	if b.ELF != "" && b.Dir == "" {
		b.ELF = d.relPath(b.ELF)
	}
	return b
}

// pio reads pio: {project_dir, env, verbose, clean} of a build or upload.
func (d *decoder) pio(n *yaml.Node) *PIOSpec {
	p := &PIOSpec{}
	if n.Kind != yaml.MappingNode {
		d.add(d.pos(n), "pio must be a mapping such as {project_dir: fw, env: esp32dev}, found %s", kindName(n))
		return p
	}
	for _, e := range d.pairs(n) {
		switch {
		case d.pioProject(p, e):
		case e.key.Value == "clean":
			p.Clean, _ = d.boolean(e.val, "clean")
		default:
			d.unknownKey(e.key, "pio", pioKeys)
		}
	}
	return p
}

// pioProject decodes the keys that name a PlatformIO project and how to run
// it, common to pio: and pio_test: (project_dir, env, verbose); false for
// any other key.
func (d *decoder) pioProject(p *PIOSpec, e pair) bool {
	switch e.key.Value {
	case "project_dir":
		if s, ok := d.str(e.val, "project_dir"); ok {
			p.ProjectDir = d.relPath(s)
		}
	case "env":
		p.Env, _ = d.str(e.val, "env")
	case "verbose":
		p.Verbose, _ = d.boolean(e.val, "verbose")
	default:
		return false
	}
	return true
}

// image reads an upload's openocd: {file, method, verify, reset, offset}.
func (d *decoder) image(n *yaml.Node) *ImageSpec {
	im := &ImageSpec{Method: "program"}
	if n.Kind != yaml.MappingNode {
		d.add(d.pos(n), "openocd must be a mapping such as {file: build/fw.elf, verify: true}, found %s", kindName(n))
		return im
	}
	for _, e := range d.pairs(n) {
		switch e.key.Value {
		case "file":
			if s, ok := d.str(e.val, "file"); ok {
				im.File = d.relPath(s)
			}
		case "method":
			im.Method = d.oneOf(e.val, "method", "program", "load")
		case "verify":
			im.Verify, _ = d.boolean(e.val, "verify")
		case "reset":
			im.Reset, _ = d.boolean(e.val, "reset")
		case "offset":
			im.Offset, _ = d.number64(e.val, "offset")
		default:
			d.unknownKey(e.key, "openocd", imageKeys)
		}
	}
	if im.File == "" {
		d.add(d.pos(n), "openocd needs file: the image to write")
	}
	return im
}

// pioTestKeys are the keys of pio_test: {...}.
var pioTestKeys = []string{"project_dir", "env", "filter", "ignore", "port", "test_port", "without_uploading", "verbose"}

// pioTest decodes a pio_test: mapping into the PlatformIO build spec it
// runs: {project_dir, env, filter, ignore, port, test_port,
// without_uploading}.
func (d *decoder) pioTest(n *yaml.Node) *BuildSpec {
	p := &PIOSpec{Test: &PIOTestSpec{}}
	b := &BuildSpec{PIO: p}
	if n.Kind != yaml.MappingNode {
		d.add(d.pos(n), "pio_test must be a mapping such as {project_dir: fw, env: nucleo_f401re}, found %s", kindName(n))
		return b
	}
	for _, e := range d.pairs(n) {
		if d.pioProject(p, e) {
			continue
		}
		switch e.key.Value {
		case "filter":
			p.Test.Filter = d.strings(e.val, "filter")
		case "ignore":
			p.Test.Ignore = d.strings(e.val, "ignore")
		case "port":
			b.Port, _ = d.str(e.val, "port")
		case "test_port":
			p.Test.TestPort, _ = d.str(e.val, "test_port")
		case "without_uploading":
			p.Test.WithoutUploading, _ = d.boolean(e.val, "without_uploading")
		default:
			d.unknownKey(e.key, "pio_test", pioTestKeys)
		}
	}
	if p.ProjectDir == "" {
		d.add(d.pos(n), "pio_test needs project_dir: the PlatformIO project folder")
	}
	return b
}
