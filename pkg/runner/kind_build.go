package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/hilrun/hilrun/pkg/steps"
)

// build, upload and pio_test steps run a tool through the bench's Builder,
// or (an upload of an image) write through the probe's session.
func init() {
	for _, k := range []steps.Kind{steps.KindBuild, steps.KindUpload, steps.KindPIOTest} {
		leafRunners[k] = (*run).build
	}
}

// build runs the step's build or upload tool with its templates filled in
// and its port released, or writes its image through the probe.
func (r *run) build(ctx context.Context, s *steps.Step, res *StepResult) error {
	b := s.Build
	if b.Image != nil {
		return r.uploadImage(ctx, s, res)
	}
	if r.bench.Build == nil {
		return fmt.Errorf("%s: no way to run build tools was given", s.Kind)
	}
	req := BuildRequest{Step: s, Progress: func(line string) {
		r.emit(Event{Type: ConsoleOutput, Console: string(s.Kind), Data: []byte(line + "\n")})
	}}
	var err error
	if req.Command, req.Env, err = r.expandCommand("command", b.Command, b.Env); err != nil {
		return err
	}
	bctx := ctx
	if s.Timeout > 0 {
		var cancel context.CancelFunc
		bctx, cancel = context.WithTimeoutCause(ctx, s.Timeout, errStepTimeout)
		defer cancel()
	}
	var out BuildOutcome
	err, portErr := r.withPortReleased(bctx, b.Port, &req.Port, func() error {
		var err error
		out, err = r.bench.Build(bctx, req)
		return err
	})
	res.Data = out.Data
	res.Message = out.Summary
	timedOut := err != nil && errors.Is(context.Cause(bctx), errStepTimeout) && ctx.Err() == nil
	switch {
	case portErr != nil && timedOut:
		// A console that could not be taken back is the bench's
		// problem, and the steps after would fail for it: say so.
		return fmt.Errorf("%s timed out after %s: %w", s.Kind, s.Timeout, portErr)
	case portErr != nil:
		return fmt.Errorf("%s: %w", s.Kind, errors.Join(err, portErr))
	case timedOut:
		return &stepError{msg: fmt.Sprintf("%s timed out after %s", s.Kind, s.Timeout)}
	case err != nil:
		return fmt.Errorf("%s: %w", s.Kind, err)
	case !out.OK:
		return &stepError{msg: out.Summary}
	}
	return nil
}

// uploadImage writes an image through the probe's session.
func (r *run) uploadImage(ctx context.Context, s *steps.Step, res *StepResult) error {
	d, err := r.probe(s.To)
	if err != nil {
		return err
	}
	im := s.Build.Image
	pctx := ctx
	if s.Timeout > 0 {
		var cancel context.CancelFunc
		pctx, cancel = context.WithTimeoutCause(ctx, s.Timeout, errStepTimeout)
		defer cancel()
	}
	res.Data = map[string]any{"file": im.File, "method": im.Method}
	if im.Method == "program" {
		p, ok := DebuggerAs[Programmer](d)
		if !ok {
			return fmt.Errorf("probe %s cannot program images", s.To)
		}
		out, err := p.Program(pctx, im.File, im.Verify, im.Reset, im.Offset)
		res.Data["output"] = out
		if err != nil {
			return probeErr(ctx, pctx, "program "+im.File, err)
		}
		res.Message = "programmed " + im.File
		return nil
	}
	w, ok := DebuggerAs[ImageLoader](d)
	if !ok {
		return fmt.Errorf("probe %s cannot load images", s.To)
	}
	out, err := w.LoadImage(pctx, im.File, im.Offset)
	res.Data["output"] = out
	if err != nil {
		return probeErr(ctx, pctx, "load "+im.File, err)
	}
	res.Message = out
	if im.Verify {
		if err := w.VerifyImage(pctx, im.File, im.Offset); err != nil {
			return probeErr(ctx, pctx, "verify "+im.File, err)
		}
		res.Message += ", verified"
	}
	if im.Reset {
		if err := d.Reset(pctx, "run"); err != nil {
			return probeErr(ctx, pctx, "reset", err)
		}
	}
	return nil
}
