package engine

import (
	"context"

	"github.com/hilrun/hilrun/pkg/build"
	"github.com/hilrun/hilrun/pkg/pio"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

// Builder runs the tools of build and upload steps with pkg/build. Each
// tool's whole output goes to logFile(step) when that is not "", and every
// output line to the runner's progress and to line, when not nil. The tools
// run with environ, or hilrun's own environment when it is nil.
func Builder(logFile func(*steps.Step) string, line func(string), environ []string) runner.Builder {
	return func(ctx context.Context, req runner.BuildRequest) (runner.BuildOutcome, error) {
		st := req.Step
		b := st.Build
		opts := build.Options{Runner: build.ExecRunner{Environ: environ}, Progress: func(l string) {
			if req.Progress != nil {
				req.Progress(l)
			}
			if line != nil {
				line(l)
			}
		}}
		if logFile != nil {
			opts.LogFile = logFile(st)
		}
		var res *build.Result
		var err error
		switch {
		case b.PIO != nil && st.Kind == steps.KindUpload:
			res, err = pio.Upload(ctx, pio.UploadSpec{ProjectDir: b.PIO.ProjectDir, Env: b.PIO.Env, Port: req.Port, Verbose: b.PIO.Verbose}, opts)
		case b.PIO != nil:
			if b.PIO.Clean {
				if res, err = pio.Clean(ctx, pio.CleanSpec{ProjectDir: b.PIO.ProjectDir, Env: b.PIO.Env}, opts); err != nil || !res.OK {
					break
				}
			}
			res, err = pio.Build(ctx, pio.BuildSpec{ProjectDir: b.PIO.ProjectDir, Env: b.PIO.Env, Verbose: b.PIO.Verbose}, opts)
		default:
			res, err = build.Command(ctx, build.CommandSpec{Command: req.Command, Shell: b.Shell, Dir: b.Dir, Env: req.Env, ELF: b.ELF}, opts)
		}
		if err != nil {
			return runner.BuildOutcome{}, err
		}
		return runner.BuildOutcome{OK: res.OK, Summary: res.Summary, Data: res.Data()}, nil
	}
}
