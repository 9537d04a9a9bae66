package mcpserver

import (
	"fmt"

	"github.com/hilrun/hilrun/pkg/plan"
	"github.com/hilrun/hilrun/pkg/steps"
)

// bindPlan binds seq into the plan a call runs: the bench file, the ports
// and probe addresses the call gave (o.sources), the server's camera under
// --sim, the call's variables and the server's limits. On a copy, the
// server then binds what is its own: paths resolved to real paths under
// its roots, probes nothing bound to its --sim or --qemu, upload ports
// that name open connections. It returns the plan and the locks its
// upload ports and probes need. Refusals of what the call asked for are
// errors wrapping ErrRefused.
func (s *Server) bindPlan(seq *steps.Sequence, o execOptions) (*plan.Plan, []string, error) {
	src := o.sources
	if !o.bound {
		// Cameras a client declares: refused before they bind to anything.
		if err := s.checkClientCameras(seq.Cameras, o.label); err != nil {
			return nil, nil, err
		}
		src = plan.Sources{Bench: s.cfg.Bench}
	}
	src.Camera, src.CameraFormat = s.cfg.Camera, s.cfg.CameraFormat
	src.Vars = o.vars
	// Secrets are the server's own (its --secret flags and --bench), never
	// what a client's files say.
	src.Secrets = s.cfg.Secrets
	src.Limits = plan.Limits{MaxValueBytes: s.cfg.MaxValueBytes, MaxExprWork: s.cfg.MaxExprWork, MaxExprMemory: s.cfg.MaxExprMemory, MaxSteps: s.cfg.MaxSteps}
	pl, err := plan.Bind(seq, src)
	if err != nil {
		return nil, nil, secretError(err)
	}
	var keys []string
	pl, err = pl.Rebind(func(seq *steps.Sequence) (*steps.Sequence, error) {
		if err := s.checkSteps(seq, o.label); err != nil {
			return nil, err
		}
		s.uploadPortDevices(seq)
		keys = s.uploadPortKeys(seq)
		for _, p := range seq.Probes {
			if err := s.bindProbe(p); err != nil {
				return nil, err
			}
			keys = append(keys, probeKey(probeBinding(p)))
		}
		return seq, nil
	})
	if err != nil {
		return nil, nil, err
	}
	return pl, keys, nil
}

// checkPlan is the policy's reading of a bound plan, the last word before
// anything opens: every step against the capabilities the server allows
// and its roots, power entries, the branches of parallel: steps each on
// ports and probes of their own, the step limit, every probe's address,
// and the bench's own checks. It never changes the plan: a path it
// resolves is one bindPlan resolved already.
func (s *Server) checkPlan(pl *plan.Plan, label func(steps.Pos) string) error {
	seq := pl.Sequence()
	if err := steps.CheckPower(seq); err != nil {
		return err
	}
	if err := s.checkSteps(seq, label); err != nil {
		return err
	}
	if err := s.checkBranchOwners(seq, label); err != nil {
		return err
	}
	if n, _ := steps.Executions(seq); n > pl.Limits().MaxSteps {
		return fmt.Errorf("the sequence would run %d steps (repeat iterations included), past this server's step limit of %d per call (hilrun mcp --max-steps raises it)", n, pl.Limits().MaxSteps)
	}
	for _, p := range seq.Probes {
		if err := s.checkProbeTarget(p); err != nil {
			return err
		}
	}
	return pl.Check(s.cfg.Engine)
}

// setPath sets *dst to v unless it holds v already: checking a bound plan
// again resolves its paths to what they are, and writes nothing.
func setPath(dst *string, v string) {
	if *dst != v {
		*dst = v
	}
}
