package engine

import (
	"context"

	"github.com/hilrun/hilrun/pkg/camera"
	"github.com/hilrun/hilrun/pkg/runner"
)

// Camera takes the pictures of camera steps with ffmpeg (pkg/camera), which
// runs with environ unless the request gives one; nil means hilrun's own.
func Camera(environ []string) runner.CameraGrabber {
	return func(ctx context.Context, req runner.GrabRequest) ([]string, error) {
		if req.Env == nil {
			req.Env = environ
		}
		c := req.Camera
		size := c.Size
		if req.Size != "" {
			size = req.Size
		}
		return camera.Grab(ctx, camera.Source{Input: c.Input, Format: c.Format, Size: size, InputArgs: c.Args, Env: req.Env}, req.Frames, req.Dir, req.Base)
	}
}
