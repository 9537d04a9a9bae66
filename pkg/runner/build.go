package runner

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/hilrun/hilrun/pkg/steps"
)

// BuildOutcome is what a build or an upload by a tool did. OK false means
// the firmware or the target is at fault (a compile error, a memory
// overflow, a bootloader that did not answer): the step fails. Data holds
// the step's data: sizes, the failure class, the first diagnostic.
type BuildOutcome struct {
	OK      bool
	Summary string
	Data    map[string]any
}

// BuildRequest is a build or upload step with its templates filled in.
type BuildRequest struct {
	Step    *steps.Step
	Command []string
	Env     []string
	// Port is the upload port's path, when the step names one.
	Port string
	// Progress receives the tool's output, line by line.
	Progress func(line string)
	// Log, when not "", is the file the tool's whole output goes to,
	// instead of the one the bench names.
	Log string
}

// BuildLogName is the name of the log file of a build or upload step's
// tool, in whatever folder keeps a run's logs: KIND-lineN.log for a step
// of a file, KIND-steps-N.log (its JSON pointer) for one of a sequence
// given as a value, such as the MCP server's.
func BuildLogName(s *steps.Step) string {
	if p := s.Pos.Pointer; p != "" {
		return string(s.Kind) + logNameRE.ReplaceAllString(p, "-") + ".log"
	}
	return fmt.Sprintf("%s-line%d.log", s.Kind, s.Pos.Line)
}

// logNameRE is what a JSON pointer holds that a file name should not.
var logNameRE = regexp.MustCompile(`[^A-Za-z0-9_]+`)

// Builder runs build and upload tools (commands, PlatformIO). An error
// means the tool could not be run at all: the bench is at fault.
type Builder func(ctx context.Context, req BuildRequest) (BuildOutcome, error)

// handover is a console that can let go of its port for an upload and take
// it back afterwards.
type handover interface {
	Release(ctx context.Context) error
	Reacquire(ctx context.Context) error
}

// expandCommand fills in the ${var} references of a command's arguments
// and environment (as KEY=VALUE entries); what names the command in errors.
func (r *run) expandCommand(what string, cmd []*steps.Template, env map[string]*steps.Template) (argv, envs []string, err error) {
	for _, t := range cmd {
		a, err := r.expand(what, t)
		if err != nil {
			return nil, nil, err
		}
		argv = append(argv, a)
	}
	for k, t := range env {
		v, err := r.expand("env "+k, t)
		if err != nil {
			return nil, nil, err
		}
		envs = append(envs, k+"="+v)
	}
	return argv, envs, nil
}

// withPortReleased runs fn with the console of port (a device name or a
// path) released, so an uploader can open it, and takes it back after;
// path receives the port's path. It returns fn's error and, apart, why the
// console could not be released or taken back.
func (r *run) withPortReleased(ctx context.Context, port string, path *string, fn func() error) (fnErr, portErr error) {
	if port == "" {
		return fn(), nil
	}
	*path = port
	dev := r.seq.Device(port)
	if dev == nil {
		return fn(), nil
	}
	*path = dev.Port
	c, ok := r.consol[dev.Name].(handover)
	if !ok {
		return fn(), nil
	}
	if err := c.Release(ctx); err != nil {
		// Release can fail after it let go of the port (closing it
		// failed): take it back, or the console stays released for the
		// rest of the run. Reacquire of a console still held is a no-op.
		err = fmt.Errorf("release %s for the upload: %w", dev.Name, err)
		if rerr := c.Reacquire(context.WithoutCancel(ctx)); rerr != nil {
			err = errors.Join(err, fmt.Errorf("take %s back after the failed release: %w", dev.Name, rerr))
		}
		return nil, err
	}
	ferr := fn()
	// What the device printed before the upload is history: the next
	// expect starts with what it prints once the port is back, from the
	// first byte.
	r.cursor[dev.Name] = r.consol[dev.Name].Cursor()
	// Take the port back whatever the upload did.
	if err := c.Reacquire(context.WithoutCancel(ctx)); err != nil {
		return ferr, fmt.Errorf("take %s back after the upload: %w", dev.Name, err)
	}
	return ferr, nil
}
