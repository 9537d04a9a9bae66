package pio

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/hilrun/hilrun/pkg/build"
	"github.com/hilrun/hilrun/pkg/gate/process"
)

// ErrNotInstalled is the error of every verb when PlatformIO Core is not
// on PATH; it wraps process.ErrNotFound too. It is a bench error: the
// machine lacks a tool, the input is fine.
var ErrNotInstalled = errors.New("PlatformIO Core (pio) is not installed: install it with `pipx install platformio` (or `pip install platformio`)")

// ErrInvalid marks input refused before PlatformIO runs: a project folder
// without platformio.ini, an unknown board or environment, an empty
// library name.
var ErrInvalid = errors.New("invalid PlatformIO request")

// Runner runs PlatformIO: `pio args...` with dir as its working folder
// ("" for the current one), standard output and standard error both to
// out. Like build.Runner, err is only for a pio that could not run
// (wrapping process.ErrNotFound when it is not installed) or was stopped by
// ctx; a pio that ran and failed returns its exit code and a nil error.
type Runner interface {
	RunPIO(ctx context.Context, dir string, args []string, out io.Writer) (exitCode int, err error)
}

// Exec is the Runner hilrun uses: the pio on PATH run by process.Runner,
// in a process group of its own that dies with hilrun.
type Exec struct {
	// Tool is the program; "" means "pio" looked up on PATH.
	Tool string
	// Runner runs it; nil means process.Runner{}.
	Runner build.Runner
	// Env holds KEY=VALUE entries added to the environment.
	Env []string
}

var _ Runner = Exec{}

// RunPIO implements Runner.
func (e Exec) RunPIO(ctx context.Context, dir string, args []string, out io.Writer) (int, error) {
	r := e.Runner
	if r == nil {
		r = process.Runner{}
	}
	tool := e.Tool
	if tool == "" {
		tool = Tool
	}
	return r.Run(ctx, append([]string{tool}, args...), dir, e.Env, out)
}

// Client runs the PlatformIO verbs hilrun offers. Every verb that acts on
// a project takes its folder and passes it as -d, so nothing reaches
// PlatformIO's global settings.
type Client struct {
	// Runner runs pio; nil means Exec{}.
	Runner Runner
	// Progress, when set, gets each line of output as it arrives, from
	// the goroutine writing the output; it must return quickly.
	Progress func(line string)
	// Log, when set, gets the whole output too.
	Log io.Writer
}

func (c *Client) runner() Runner {
	if c == nil || c.Runner == nil {
		return Exec{}
	}
	return c.Runner
}

// Output is what a verb that answers in text printed, and how it ended.
type Output struct {
	Args     []string `json:"args"`
	ExitCode int      `json:"exit_code"`
	// Text is the output, at most maxJSON bytes of it; Truncated says
	// there was more.
	Text      string `json:"text"`
	Truncated bool   `json:"truncated"`
}

// OK reports whether pio exited 0.
func (o *Output) OK() bool { return o.ExitCode == 0 }

// Summary is the last line of the output that says something, for a
// one-line report of a failure.
func (o *Output) Summary() string {
	lines := strings.Split(strings.TrimSpace(o.Text), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" && strings.Trim(l, "=-* ") != "" {
			return l
		}
	}
	return ""
}

// run runs pio with args in dir and keeps its output.
func (c *Client) run(ctx context.Context, dir string, args []string) (*Output, error) {
	buf := &limitedBuffer{max: maxJSON}
	var w io.Writer = buf
	var lw *lineWriter
	if c != nil && (c.Progress != nil || c.Log != nil) {
		ws := []io.Writer{buf}
		if c.Log != nil {
			ws = append(ws, c.Log)
		}
		if c.Progress != nil {
			lw = &lineWriter{fn: c.Progress}
			ws = append(ws, lw)
		}
		w = io.MultiWriter(ws...)
	}
	code, err := c.runner().RunPIO(ctx, dir, args, w)
	if lw != nil {
		lw.flush()
	}
	if err != nil {
		if errors.Is(err, process.ErrNotFound) {
			return nil, fmt.Errorf("%w: %w", ErrNotInstalled, err)
		}
		return nil, fmt.Errorf("pio %s: %w", verbName(args), err)
	}
	return &Output{Args: args, ExitCode: code, Text: buf.String(), Truncated: buf.over}, nil
}

// verbName is the command words of args: "pkg install".
func verbName(args []string) string {
	var words []string
	for _, a := range args {
		if strings.HasPrefix(a, "-") || len(words) == 2 {
			break
		}
		words = append(words, a)
	}
	return strings.Join(words, " ")
}

// failed is the error of a verb whose pio exited non-zero.
func failed(out *Output) error {
	return fmt.Errorf("pio %s: exit code %d: %s", verbName(out.Args), out.ExitCode, first(out.Summary(), "no explanation in its output"))
}

func first(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// lineWriter calls fn with each whole line written to it.
type lineWriter struct {
	fn   func(string)
	part []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if len(w.part) < 4096 {
				w.part = append(w.part, p[:min(len(p), 4096-len(w.part))]...)
			}
			break
		}
		line := append(w.part, p[:i]...)
		w.fn(strings.TrimRight(string(line), "\r"))
		w.part = w.part[:0]
		p = p[i+1:]
	}
	return n, nil
}

func (w *lineWriter) flush() {
	if len(w.part) > 0 {
		w.fn(strings.TrimRight(string(w.part), "\r"))
		w.part = nil
	}
}

// --- checks made before pio runs ---

var envHeader = regexp.MustCompile(`^\s*\[env:([^\]\s]+)\]`)

// ProjectEnvs reads the environments of the project in dir from its
// platformio.ini, in file order, without running PlatformIO. extra is
// true when the file includes others (extra_configs), which may add
// environments this reading does not see.
func ProjectEnvs(dir string) (envs []string, extra bool, err error) {
	path := filepath.Join(dir, "platformio.ini")
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, false, fmt.Errorf("%w: %s is not a PlatformIO project: it has no platformio.ini", ErrInvalid, dir)
		}
		return nil, false, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 1<<20))
	for sc.Scan() {
		line := sc.Text()
		if m := envHeader.FindStringSubmatch(line); m != nil {
			envs = append(envs, m[1])
		}
		if strings.HasPrefix(strings.TrimSpace(line), "extra_configs") {
			extra = true
		}
	}
	if err := sc.Err(); err != nil {
		return nil, false, fmt.Errorf("read %s: %w", path, err)
	}
	return envs, extra, nil
}

// CheckProject checks, before anything runs, that dir holds a PlatformIO
// project and that env ("" for the default ones) is one of its
// environments.
func CheckProject(dir, env string) error {
	if dir == "" {
		return fmt.Errorf("%w: project_dir is required", ErrInvalid)
	}
	envs, extra, err := ProjectEnvs(dir)
	if err != nil {
		return err
	}
	if env == "" || extra {
		return nil
	}
	for _, e := range envs {
		if e == env {
			return nil
		}
	}
	known := "it has none"
	if len(envs) > 0 {
		known = "it has " + strings.Join(envs, ", ")
	}
	return fmt.Errorf("%w: project %s has no environment %q (%s)", ErrInvalid, dir, env, known)
}

// projectArgs is -d dir [-e env].
func projectArgs(dir, env string) []string {
	a := []string{"-d", dir}
	if env != "" {
		a = append(a, "-e", env)
	}
	return a
}
