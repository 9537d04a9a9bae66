package runner

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/hilrun/hilrun/pkg/imaging"
	"github.com/hilrun/hilrun/pkg/steps"
)

func init() { leafRunners[steps.KindCamera] = (*run).camera }

// defaultCameraTimeout bounds a camera step that gives no timeout.
const defaultCameraTimeout = 30 * time.Second

// camera takes the step's pictures with the bench's camera grabber, into
// the artifact folder, and checks them when the step has image checks.
func (r *run) camera(ctx context.Context, s *steps.Step, res *StepResult) error {
	cs := s.Camera
	cam := r.seq.Camera(cs.Camera)
	if cam == nil {
		return fmt.Errorf("camera %s is not declared", cs.Camera)
	}
	if r.bench.Camera == nil {
		return errors.New("camera: no way to take pictures was given")
	}
	dir, err := r.artifactDir()
	if err != nil {
		return err
	}
	base := cs.Label
	if base == "" {
		base = artifactName(s, res)
	}
	timeout := s.Timeout
	if timeout == 0 {
		timeout = defaultCameraTimeout
	}
	cctx, cancel := context.WithTimeoutCause(ctx, timeout, errStepTimeout)
	defer cancel()
	frames, err := r.bench.Camera(cctx, GrabRequest{Camera: cam, Frames: cs.Frames, Size: cs.Size, Dir: dir, Base: base})
	res.Data = map[string]any{"camera": cam.Name, "input": cam.Input, "frames": frames}
	res.Attachments = append(res.Attachments, frames...)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("camera %s: %w", cam.Name, context.Cause(ctx))
		}
		return fmt.Errorf("camera %s: %w", cam.Name, err)
	}
	res.Message = fmt.Sprintf("%d picture(s) from %s", len(frames), cam.Name)
	if len(cs.Checks) == 0 {
		return nil
	}
	return r.checkImages(cs, frames, res)
}

// checkImages applies every check to every frame; the first that does not
// hold fails the step.
func (r *run) checkImages(cs *steps.CameraSpec, frames []string, res *StepResult) error {
	var results []map[string]any
	defer func() { res.Data["checks"] = results }()
	for _, f := range frames {
		img, err := imaging.Load(f)
		if err != nil {
			return fmt.Errorf("read the picture: %w", err)
		}
		for _, c := range cs.Checks {
			m, err := imaging.Measure(img, c.Region)
			if err != nil {
				return &stepError{msg: fmt.Sprintf("expect_image at %s: %v (%s)", c.Pos, err, filepath.Base(f))}
			}
			row := map[string]any{
				"frame": f, "region": []int{m.Region.X, m.Region.Y, m.Region.W, m.Region.H},
				"brightness": round3(m.Brightness), "color": m.Mean.Hex(),
			}
			results = append(results, row)
			var fails []string
			for _, b := range c.Brightness {
				if !b.Holds(m.Brightness) {
					fails = append(fails, fmt.Sprintf("brightness %.3f, want %s", m.Brightness, b))
				}
			}
			if c.Color != nil {
				tol := c.Tolerance
				if tol == 0 {
					tol = 0.25
				}
				d := imaging.Distance(m.Mean, *c.Color)
				row["color_distance"] = round3(d)
				if d > tol {
					fails = append(fails, fmt.Sprintf("colour %s is %.3f from %s, want at most %.3g", m.Mean.Hex(), d, c.ColorText, tol))
				}
			}
			row["passed"] = len(fails) == 0
			if len(fails) > 0 {
				return &stepError{
					msg:      fmt.Sprintf("expect_image: %s of %s: %s", m.Region, filepath.Base(f), strings.Join(fails, "; ")),
					expected: describeCheck(c),
					received: fmt.Sprintf("brightness %.3f, colour %s", m.Brightness, m.Mean.Hex()),
				}
			}
		}
	}
	res.Message += ", image checks passed"
	return nil
}

// describeCheck is what an image check expects, for the step's result.
func describeCheck(c *steps.ImageCheck) string {
	var parts []string
	for _, b := range c.Brightness {
		parts = append(parts, "brightness "+b.String())
	}
	if c.Color != nil {
		parts = append(parts, "colour near "+c.ColorText)
	}
	return c.Region.String() + ": " + strings.Join(parts, ", ")
}

// round3 rounds f to three decimals, for the reports.
func round3(f float64) float64 { return float64(int64(f*1000+0.5)) / 1000 }
