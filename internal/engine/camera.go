package engine

import (
	"context"

	"github.com/hilrun/hilrun/pkg/camera"
	"github.com/hilrun/hilrun/pkg/gate/process"
	"github.com/hilrun/hilrun/pkg/runner"
)

// Camera takes the pictures of camera steps with ffmpeg (pkg/camera),
// started through procs, whose environment is ffmpeg's.
func Camera(procs process.Policy) runner.CameraGrabber {
	return func(ctx context.Context, req runner.GrabRequest) ([]string, error) {
		c := req.Camera
		size := c.Size
		if req.Size != "" {
			size = req.Size
		}
		return camera.Grab(ctx, camera.Source{Input: c.Input, Format: c.Format, Size: size, InputArgs: c.Args, Procs: procs}, req.Frames, req.Dir, req.Base)
	}
}
