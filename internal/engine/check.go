package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/hilrun/hilrun/pkg/pio"
	"github.com/hilrun/hilrun/pkg/steps"
)

// Check is the bench's check (runner.Bench.Check): before anything opens,
// it refuses probes nothing binds or no backend opens, steps a probe's
// backend cannot run, symbols and images that are not there, and PlatformIO
// projects that are not, all in one steps.ErrorList.
func Check(seq *steps.Sequence) error {
	var all steps.ErrorList
	for _, err := range []error{CheckProbes(seq), checkImages(seq), checkPIOProjects(seq)} {
		var el steps.ErrorList
		switch {
		case err == nil:
		case errors.As(err, &el):
			all = append(all, el...)
		default:
			return err
		}
	}
	if len(all) > 0 {
		return all
	}
	return nil
}

// checkImages reports the image files of upload steps that are not there,
// unless a build step comes before the upload (it may make the file).
func checkImages(seq *steps.Sequence) error {
	var errs steps.ErrorList
	built := false
	steps.Walk(seq, func(s *steps.Step) {
		if s.Kind == steps.KindBuild {
			built = true
		}
		if s.Kind != steps.KindUpload || s.Build == nil || s.Build.Image == nil || built {
			return
		}
		f := s.Build.Image.File
		if strings.Contains(f, "${") {
			return // known only when the step runs
		}
		if _, err := os.Stat(f); err != nil {
			e := &steps.Error{Pos: s.Pos, Msg: fmt.Sprintf("upload: image file %s: %v", f, errors.Unwrap(err))}
			if errors.Is(err, fs.ErrNotExist) {
				e.Missing = f
			}
			errs = append(errs, e)
		}
	})
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// checkPIOProjects reports pio_test steps (and PlatformIO builds and
// uploads) whose project has no platformio.ini or lacks the environment
// named, before anything runs.
func checkPIOProjects(seq *steps.Sequence) error {
	var errs steps.ErrorList
	steps.Walk(seq, func(s *steps.Step) {
		if s.Build == nil || s.Build.PIO == nil || strings.Contains(s.Build.PIO.ProjectDir, "${") {
			return
		}
		// A build may make the project it builds only in odd setups; a
		// missing platformio.ini is still worth saying before the run.
		if err := pio.CheckProject(s.Build.PIO.ProjectDir, s.Build.PIO.Env); err != nil {
			errs = append(errs, &steps.Error{Pos: s.Pos, Msg: fmt.Sprintf("%s: %s", s.Kind, strings.TrimPrefix(err.Error(), pio.ErrInvalid.Error()+": "))})
		}
	})
	if len(errs) > 0 {
		return errs
	}
	return nil
}
