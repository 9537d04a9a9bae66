package mcpserver

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/hilrun/hilrun/pkg/steps"
)

// checkControl applies what the capability check leaves to the bench
// control steps. Power commands come from the server's bench file only,
// never from the sequence a client sends. Host commands run only inside a
// root, never through a shell.
func (s *Server) checkControl(seq *steps.Sequence, st *steps.Step) error {
	p := &s.cfg.Policy
	switch st.Kind {
	case steps.KindPower:
		target := steps.PowerTarget(seq, st.Power)
		e := seq.Power[target]
		if e == nil || s.cfg.Bench == nil || s.cfg.Bench.Power[target] != e {
			return refused("power %s: power commands come from the server's bench file (hilrun mcp --bench FILE), and it has no power entry for %q", target, target)
		}
	case steps.KindExec:
		if st.Exec.Shell {
			return refused("exec: shell: true is not run over MCP; give the command as an argument vector")
		}
		dir, err := p.ResolveDir("dir", st.Exec.Dir, s.baseDir(seq))
		if err != nil {
			return err
		}
		setPath(&st.Exec.Dir, dir)
	}
	return nil
}

// baseDir is the folder relative paths of seq are taken from: its own when
// it is a file under a root, else the first root.
func (s *Server) baseDir(seq *steps.Sequence) string {
	p := &s.cfg.Policy
	if filepath.IsAbs(seq.File) && p.inRoot(filepath.Dir(seq.File)) {
		return filepath.Dir(seq.File)
	}
	if len(p.Roots) == 0 {
		return ""
	}
	return p.Roots[0]
}

// cameraDevice matches the camera references a client may make itself: a
// camera number or a video4linux device.
var cameraDevice = regexp.MustCompile(`^([0-9]{1,3}|/dev/video[0-9]{1,3})$`)

// checkClientCameras refuses the cameras that a client wrote an input,
// format or ffmpeg arguments for, wherever it wrote them: a sequence it
// sent, a sequence or bench file under a root. ffmpeg's input and
// arguments can name any file or URL, and no root confines them: cameras
// come from the operator's --bench or --sim. A camera a step names by
// device number or /dev/videoN stays allowed.
func (s *Server) checkClientCameras(cams []*steps.Camera, label func(steps.Pos) string) error {
	var errs []string
	for _, c := range cams {
		if c.Input == "" && c.Format == "" && len(c.Args) == 0 {
			continue
		}
		if c.Implicit && cameraDevice.MatchString(c.Input) && c.Format == "" && len(c.Args) == 0 {
			continue
		}
		errs = append(errs, s.cameraRefusal(c, label))
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s: %w", strings.Join(errs, "\n"), ErrRefused)
	}
	return nil
}

func (s *Server) cameraRefusal(c *steps.Camera, label func(steps.Pos) string) string {
	where := c.Pos.String()
	if label != nil {
		where = label(c.Pos)
	}
	return fmt.Sprintf("%s: camera %s: cameras come from the server's bench file (hilrun mcp --bench FILE) or --sim, never with an input, format or args a client gives; a sequence may name one of them, or a camera device by number (0) or path (/dev/video2)", where, c.Name)
}

// checkCameras checks the cameras of a bound sequence: each must read
// what the operator gave the server, its bench file's camera of that name
// or the virtual board's, or be a camera device a step names by number or
// /dev/videoN. Anything else would let a client point ffmpeg at files,
// URLs or filter graphs, and give it ffmpeg arguments.
func (s *Server) checkCameras(seq *steps.Sequence, label func(steps.Pos) string) []string {
	var errs []string
	for _, c := range seq.Cameras {
		if s.cfg.Bench != nil {
			if b := s.cfg.Bench.Cameras[c.Name]; b != nil && b.Input != "" &&
				c.Input == b.Input && c.Format == b.Format && slices.Equal(c.Args, b.Args) {
				continue
			}
		}
		if s.cfg.Camera != "" && c.Input == s.cfg.Camera && c.Format == s.cfg.CameraFormat && len(c.Args) == 0 {
			continue
		}
		if c.Implicit && cameraDevice.MatchString(c.Input) && c.Format == "" && len(c.Args) == 0 {
			continue
		}
		errs = append(errs, s.cameraRefusal(c, label))
	}
	return errs
}
