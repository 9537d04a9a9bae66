package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/hilrun/hilrun/pkg/steps"
)

// GrabRequest asks a camera for Frames pictures, saved as PNG files in Dir
// named after Base.
type GrabRequest struct {
	Camera *steps.Camera
	Frames int
	// Size such as 640x480, or "" for the camera's own.
	Size string
	Dir  string
	Base string
}

// CameraGrabber takes pictures (with ffmpeg, in hilrun). It returns the
// files written, in order; with an error it returns those written before
// it. Every error is the bench's: a missing camera or tool.
type CameraGrabber func(ctx context.Context, req GrabRequest) ([]string, error)

// artifactDir returns the folder for pictures and command output, made on
// first use.
func (r *run) artifactDir() (string, error) {
	dir := r.opts.ArtifactDir
	if dir == "" {
		return "", errors.New("no folder for pictures and command output was given")
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return "", fmt.Errorf("make the folder for pictures and command output: %w", err)
	}
	return dir, nil
}

// artifactName makes a file name for a step's output: its kind and its id,
// else its kind and where it ran ("exec-hub", "exec-3", "exec-4-2.0" for
// the second iteration of a repeat). The kind keeps it apart from the
// consoles' NAME.log in the same folder.
func artifactName(s *steps.Step, res *StepResult) string {
	if s.ID != "" {
		return string(s.Kind) + "-" + s.ID
	}
	p := strings.NewReplacer("#", "-", "/", "-").Replace(res.Path)
	return string(s.Kind) + "-" + p
}
