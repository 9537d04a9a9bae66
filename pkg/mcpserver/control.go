package mcpserver

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/hilrun/hilrun/internal/engine"
	"github.com/hilrun/hilrun/pkg/build"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

func (s *Server) grabber() runner.CameraGrabber {
	if s.cfg.Grab != nil {
		return s.cfg.Grab
	}
	return engine.Camera()
}

func (s *Server) host() runner.HostRunner {
	if s.cfg.Host != nil {
		return s.cfg.Host
	}
	return build.ExecRunner{Environ: hostEnviron()}
}

// hostEnviron is the environment of host commands run for a client: enough
// to find programs and run them, none of the server's secrets (such as
// HILRUN_MCP_TOKEN). A step's env adds to it.
func hostEnviron() []string {
	// Not nil even when none is set: nil would mean the server's own.
	env := []string{}
	for _, k := range []string{"PATH", "HOME", "USER", "LANG", "LC_ALL", "TZ", "TMPDIR"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// checkControl applies the policy to the bench-control steps. A read-only
// server refuses everything that acts on the board other than through its
// console: modem lines (which reset it), power and host commands. Host
// commands otherwise run like builds: only with a --root, inside it, and
// without a shell. Power commands come from the server's bench file only,
// never from the sequence a client sends.
func (s *Server) checkControl(seq *steps.Sequence, st *steps.Step) error {
	p := &s.cfg.Policy
	switch st.Kind {
	case steps.KindLines, steps.KindBreak, steps.KindResetSequence:
		if p.ReadOnly {
			return refused("%s: the server is read-only (--read-only), and modem lines and breaks can reset the board", st.Kind)
		}
	case steps.KindPower:
		if p.ReadOnly {
			return refused("power: the server is read-only (--read-only)")
		}
		e := seq.Power[st.Power.Target]
		if e == nil || s.cfg.Bench == nil || s.cfg.Bench.Power[st.Power.Target] != e {
			return refused("power %s: power commands come from the server's bench file (hilrun mcp --bench FILE), and it has no power entry for %q", st.Power.Target, st.Power.Target)
		}
	case steps.KindExec:
		if p.ReadOnly {
			return refused("exec: the server is read-only (--read-only)")
		}
		if !p.AllowExec {
			return refused("exec: host commands are off on this server; start hilrun mcp with --allow-exec and --root DIR")
		}
		if len(p.Roots) == 0 {
			return refused("exec: host commands run programs, and this server has no --root folder to run them in; start hilrun mcp with --root DIR")
		}
		if st.Exec.Shell {
			return refused("exec: shell: true is not run over MCP; give the command as an argument vector")
		}
		base := p.Roots[0]
		if filepath.IsAbs(seq.File) && p.inRoot(filepath.Dir(seq.File)) {
			base = filepath.Dir(seq.File)
		}
		dir, err := p.ResolveDir("dir", st.Exec.Dir, base)
		if err != nil {
			return err
		}
		st.Exec.Dir = dir
	}
	return nil
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
