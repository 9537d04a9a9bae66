package mcpserver

import (
	"fmt"
	"strings"

	"github.com/hilrun/hilrun/pkg/steps"
)

// checkBranchOwners refuses a bound sequence in which two branches of a
// parallel: step reach one port or probe under two names: a
// connection's label and its id or port, a device and the connection
// whose port it names, two probes bound to one debugger. Validation
// refuses one name in two branches; only binding knows what names are
// one thing. Each problem names the step by where, its JSON pointer for
// an inline sequence.
func (s *Server) checkBranchOwners(seq *steps.Sequence, label func(steps.Pos) string) error {
	var errs []string
	steps.Walk(seq, func(st *steps.Step) {
		if st.Kind != steps.KindParallel {
			return
		}
		type owner struct {
			branch string
			use    steps.Use
		}
		first := map[string]owner{}
		told := map[string]bool{}
		steps.BranchUses(st, func(branch string, at *steps.Step, u steps.Use) {
			key, what := boundKey(seq, u)
			if key == "" {
				return
			}
			o, seen := first[key]
			switch {
			case !seen:
				first[key] = owner{branch, u}
			case o.branch != branch && !told[key+"\x00"+branch]:
				told[key+"\x00"+branch] = true
				where := at.Pos.String()
				if label != nil {
					where = label(at.Pos)
				}
				errs = append(errs, fmt.Sprintf("%s: branch %s uses %s as %s, which branch %s uses as %s: a port or probe belongs to one branch of a parallel:; use it in one branch, or before or after the parallel",
					where, branch, what, u, o.branch, o.use))
			}
		})
	})
	if len(errs) > 0 {
		return fmt.Errorf("%s: %w", strings.Join(errs, "\n"), ErrRefused)
	}
	return nil
}

// boundKey is what use u of bound sequence seq reaches, as one key for
// every name of it, and its description; "" when binding left it
// unknown (a device found by its USB ids as it opens).
func boundKey(seq *steps.Sequence, u steps.Use) (key, what string) {
	switch u.Kind {
	case "device":
		port := ""
		if d := seq.Device(u.Name); d != nil {
			port = d.Port
		} else if steps.IsPortPath(u.Name) {
			port = u.Name
		}
		if port == "" {
			return "", ""
		}
		return "port " + realPort(port), "port " + port
	case "probe":
		p := seq.Probe(u.Name)
		if p == nil {
			return "", ""
		}
		b := probeBinding(p)
		if b == "" {
			return "", ""
		}
		return probeKey(b), "the debugger at " + strings.TrimSpace(b)
	}
	return "", ""
}
