package engine

import (
	"context"

	"github.com/hilrun/hilrun/pkg/camera"
	"github.com/hilrun/hilrun/pkg/runner"
)

// Camera takes the pictures of camera steps with ffmpeg (pkg/camera).
func Camera() runner.CameraGrabber {
	return func(ctx context.Context, req runner.GrabRequest) ([]string, error) {
		c := req.Camera
		size := c.Size
		if req.Size != "" {
			size = req.Size
		}
		return camera.Grab(ctx, camera.Source{Input: c.Input, Format: c.Format, Size: size, InputArgs: c.Args, Env: req.Env}, req.Frames, req.Dir, req.Base)
	}
}
