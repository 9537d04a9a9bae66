package mcpserver

import (
	"fmt"
	"strings"

	"github.com/hilrun/hilrun/pkg/steps"
)

// checkProbeTarget applies the policy to what a bound probe reaches,
// wherever its address came from (a sequence or bench file under a root,
// run_sequence's probes argument, the operator's --bench or flags): an
// OpenOCD or GDB stub address must be one the server itself binds or one
// an --allow-probe glob names, and a GDB stub on a device or Unix socket
// path passes the port globs like serial_open, its links followed. A
// probe that the server launches has no address yet: its launch was
// checked with the file that asked for it.
func (s *Server) checkProbeTarget(p *steps.Probe) error {
	pol := &s.cfg.Policy
	for _, addr := range []string{p.OpenOCD, p.GDB} {
		if addr == "" {
			continue
		}
		own := s.ownProbeAddr(addr)
		if !own && pol.ReadOnly {
			return refused("probe %s: %s: a read-only server attaches only to the debuggers its --bench file, --sim or --qemu give", p.Name, addr)
		}
		if err := pol.CheckProbeAddr(addr, own); err != nil {
			return fmt.Errorf("probe %s: %w", p.Name, err)
		}
		if !probePath(addr) {
			continue
		}
		check := pol.CheckPort
		if own {
			check = pol.CheckTrustedPort
		}
		if err := check(addr); err != nil {
			return fmt.Errorf("probe %s: %w", p.Name, err)
		}
	}
	return nil
}

// probePath reports whether a probe address is a path (a serial port or a
// Unix socket) rather than HOST:PORT.
func probePath(addr string) bool {
	return strings.HasPrefix(addr, "/") || strings.HasPrefix(addr, ".")
}
