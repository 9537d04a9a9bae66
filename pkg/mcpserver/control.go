package mcpserver

import (
	"fmt"
	"path/filepath"
	"regexp"

	"github.com/hilrun/hilrun/pkg/build"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

func (s *Server) grabber() runner.CameraGrabber {
	return s.cfg.Grab
}

func (s *Server) host() runner.HostRunner {
	if s.cfg.Host != nil {
		return s.cfg.Host
	}
	return build.ExecRunner{Environ: s.cfg.Policy.Environ()}
}

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
		st.Exec.Dir = dir
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

// checkCameras lets a sequence use only the server's cameras: under --sim
// the board's (already bound), else the bench file's by name, or a camera
// device by number or /dev/videoN. Anything else would let a client point
// ffmpeg at files, URLs or filter graphs, and give it ffmpeg arguments.
func (s *Server) checkCameras(seq *steps.Sequence, label func(steps.Pos) string) []string {
	if s.cfg.Camera != "" {
		return nil
	}
	var errs []string
	for _, c := range seq.Cameras {
		if s.cfg.Bench != nil {
			if b := s.cfg.Bench.Cameras[c.Name]; b != nil {
				c.Input, c.Format, c.Args = b.Input, b.Format, b.Args
				if b.Size != "" {
					c.Size = b.Size
				}
				continue
			}
		}
		if c.Implicit && cameraDevice.MatchString(c.Input) && c.Format == "" && len(c.Args) == 0 {
			continue
		}
		where := c.Pos.String()
		if label != nil {
			where = label(c.Pos)
		}
		errs = append(errs, fmt.Sprintf("%s: camera %s: cameras come from the server's bench file (hilrun mcp --bench FILE) or --sim; a sequence may name one of them, or a camera device by number (0) or path (/dev/video2)", where, c.Name))
	}
	return errs
}
