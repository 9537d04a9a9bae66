package cli

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/hilrun/hilrun/pkg/build"
	"github.com/hilrun/hilrun/pkg/build/pio"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/serialx"
	"github.com/hilrun/hilrun/pkg/steps"
)

// runBuild runs build and upload tools with pkg/build, writing each tool's
// whole output under logDir.
func runBuild(logDir string) runner.Builder {
	return func(ctx context.Context, req runner.BuildRequest) (runner.BuildOutcome, error) {
		s := req.Step
		b := s.Build
		opts := build.Options{Progress: req.Progress}
		if logDir != "" {
			opts.LogFile = filepath.Join(logDir, fmt.Sprintf("%s-line%d.log", s.Kind, s.Pos.Line))
		}
		var res *build.Result
		var err error
		switch {
		case b.PIO != nil && s.Kind == steps.KindUpload:
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

// handoverConsole lets the runner release a console's port for an upload
// and take it back, following a USB device that re-enumerates.
type handoverConsole struct {
	*serialx.Console
	resolve func(ctx context.Context) (string, error)
}

func (c *handoverConsole) Reacquire(ctx context.Context) error {
	return c.Console.Reacquire(ctx, serialx.ReacquireOptions{Resolve: c.resolve})
}
