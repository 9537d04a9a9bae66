package mcpserver

import (
	"path/filepath"

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
	return build.ExecRunner{}
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
