package build

import (
	"context"
	"errors"
	"fmt"
	"github.com/hilrun/hilrun/pkg/gate/process"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ErrInvalidSpec marks a spec that cannot describe a command (an empty
// argument vector, a shell command in several pieces): the sequence is at
// fault, not the firmware or the bench.
var ErrInvalidSpec = errors.New("invalid build command")

// CommandSpec is a build with any tool: `build: {command: [make, -C,
// firmware], dir, env, elf, shell}`.
type CommandSpec struct {
	// Command is the argument vector, run without a shell. With Shell it
	// must be one string, run by sh -c.
	Command []string
	// Shell runs Command[0] with sh -c; only when a sequence asks for it.
	Shell bool
	// Dir is the working directory; "" is the current one.
	Dir string
	// Env holds KEY=VALUE entries added to hilrun's environment.
	Env []string
	// ELF names the image the build makes; when set, a successful build
	// reports its sizes, and a build that does not make it fails. A
	// relative path is relative to Dir.
	ELF string
}

// Options says how to run a command and what to do with its output.
type Options struct {
	// Runner runs the process; nil refuses it (process.Runner with no
	// policy): hilrun's wiring always gives one.
	Runner Runner
	// Progress, when set, is called with each line of output (without its
	// line ending) as it arrives, from the goroutine writing the output.
	// It must return quickly.
	Progress func(line string)
	// LogFile, when set, receives the whole output; its directory is made
	// if missing and an existing file is replaced.
	LogFile string
	// TailLines and TailBytes bound Result.Tail; 0 means 40 lines and
	// 8 KiB.
	TailLines, TailBytes int
	// Now is the clock for Result.Duration; nil means time.Now.
	Now func() time.Time
}

// installHints tell a user without a tool how to get it.
var installHints = map[string]string{
	"pio":        "install PlatformIO Core: pipx install platformio, or pip install platformio",
	"platformio": "install PlatformIO Core: pipx install platformio, or pip install platformio",
	"make":       "install make (Debian: apt-get install make)",
	"cmake":      "install CMake (Debian: apt-get install cmake)",
	"ninja":      "install Ninja (Debian: apt-get install ninja-build)",
	"sh":         "install a POSIX shell",
}

func installHint(tool string) string {
	base := filepath.Base(tool)
	if h, ok := installHints[base]; ok {
		return h
	}
	if strings.HasPrefix(base, "arm-none-eabi-") {
		return "install the Arm GNU toolchain (Debian: apt-get install gcc-arm-none-eabi)"
	}
	return "install it or add its directory to PATH"
}

// Command runs a build command and describes the outcome. A command that
// ran and failed gives a Result with OK false and a nil error: the
// firmware is at fault. The error is for a command that could not run: an
// invalid spec (wrapping ErrInvalidSpec), a tool that is not installed
// (wrapping process.ErrNotFound), a log file that cannot be written, or ctx
// ending first (wrapping ctx.Err()).
func Command(ctx context.Context, spec CommandSpec, opts Options) (*Result, error) {
	argv, err := spec.argv()
	if err != nil {
		return nil, err
	}
	res, out, err := run(ctx, argv, spec.Dir, spec.Env, opts)
	if err != nil {
		return nil, err
	}
	if res.OK && spec.ELF != "" {
		elfPath := spec.ELF
		if !filepath.IsAbs(elfPath) && spec.Dir != "" {
			elfPath = filepath.Join(spec.Dir, elfPath)
		}
		e, err := ELFSizes(elfPath)
		if err != nil {
			res.OK, res.Class = false, Unknown
			res.Summary = oneLine(err.Error())
			res.Diagnostic = Diagnostic{Message: res.Summary}
			return res, nil
		}
		s := Sizes{}
		if out.sizes.found {
			s = out.sizes.s
		}
		s = s.WithELF(e)
		res.Sizes = &s
		res.Summary = sizeSummary(res.Sizes)
	}
	return res, nil
}

// argv is the argument vector the spec runs.
func (spec CommandSpec) argv() ([]string, error) {
	if spec.Shell {
		if len(spec.Command) != 1 || strings.TrimSpace(spec.Command[0]) == "" {
			return nil, fmt.Errorf("%w: with shell: true, command must be one string, got %d", ErrInvalidSpec, len(spec.Command))
		}
		return []string{"sh", "-c", spec.Command[0]}, nil
	}
	if len(spec.Command) == 0 || spec.Command[0] == "" {
		return nil, fmt.Errorf("%w: command is empty", ErrInvalidSpec)
	}
	return append([]string(nil), spec.Command...), nil
}

// Run runs argv like Command but without an ELF to read: for tools that
// wrap hilrun's build package (PlatformIO) and know their own artifacts.
func Run(ctx context.Context, argv []string, dir string, env []string, opts Options) (*Result, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, fmt.Errorf("%w: command is empty", ErrInvalidSpec)
	}
	res, _, err := run(ctx, argv, dir, env, opts)
	return res, err
}

func run(ctx context.Context, argv []string, dir string, env []string, opts Options) (*Result, *sink, error) {
	runner := opts.Runner
	if runner == nil {
		runner = process.Runner{}
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	out := newSink(opts)
	if opts.LogFile != "" {
		if err := os.MkdirAll(filepath.Dir(opts.LogFile), 0o777); err != nil {
			return nil, nil, fmt.Errorf("create build log: %w", err)
		}
		f, err := os.Create(opts.LogFile)
		if err != nil {
			return nil, nil, fmt.Errorf("create build log: %w", err)
		}
		defer f.Close()
		out.log = f
	}
	start := now()
	code, err := runner.Run(ctx, argv, dir, env, out)
	out.flush()
	end := now()
	if out.logErr != nil && err == nil {
		err = fmt.Errorf("write build log %s: %w", opts.LogFile, out.logErr)
	}
	if out.log != nil {
		if cerr := out.log.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("write build log %s: %w", opts.LogFile, cerr)
		}
	}
	if err != nil {
		if errors.Is(err, process.ErrNotFound) {
			return nil, nil, fmt.Errorf("%s is not installed (%s): %w", argv[0], installHint(argv[0]), err)
		}
		return nil, nil, err
	}
	res := &Result{
		OK:       code == 0,
		Tail:     out.tail.String(),
		Duration: end.Sub(start),
		Command:  argv,
		ExitCode: code,
		LogFile:  opts.LogFile,
	}
	if out.sizes.found {
		s := out.sizes.s
		res.Sizes = &s
	}
	if res.OK {
		res.Summary = sizeSummary(res.Sizes)
		if res.Summary == "" {
			res.Summary = filepath.Base(argv[0]) + " succeeded"
		}
		return res, out, nil
	}
	res.Class, res.Diagnostic, res.Summary = out.class.result()
	if res.Summary == "" {
		res.Summary = fmt.Sprintf("%s exited with code %d", filepath.Base(argv[0]), code)
	}
	return res, out, nil
}
