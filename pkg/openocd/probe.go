package openocd

import (
	"github.com/hilrun/hilrun/pkg/gate/dial"

	"context"
	"errors"
)

// Probe is a session with, when hilrun launched it, the OpenOCD process
// behind it; closing the probe also stops that process.
type Probe struct {
	*Session
	proc *Process
}

// Open returns a session to the OpenOCD at addr (as Dial reads it:
// HOST:PORT for its telnet server, tcl://HOST:PORT for its Tcl RPC server)
// or, when launch is not nil, to an OpenOCD it launches for the session,
// over its Tcl RPC server unless launch says otherwise or the server is not
// there. The launched process outlives ctx, which bounds only the start;
// Close stops it. A running OpenOCD is dialled through the dial gate's
// policy gate; a launched one through launch.Dial.
func Open(ctx context.Context, addr string, launch *LaunchConfig, gate dial.Policy) (*Probe, error) {
	if launch == nil {
		s, err := Dial(ctx, addr, WithGate(gate))
		if err != nil {
			return nil, err
		}
		return &Probe{Session: s}, nil
	}
	proc, err := Launch(ctx, *launch)
	if err != nil {
		return nil, err
	}
	s, err := proc.Dial(ctx)
	if err != nil {
		proc.Stop()
		return nil, err
	}
	return &Probe{Session: s, proc: proc}, nil
}

// Process is the OpenOCD hilrun launched for the probe, or nil.
func (p *Probe) Process() *Process { return p.proc }

// LogErr says what the log file of the OpenOCD the probe launched lost,
// as Process.LogErr; nil for a probe that launched none.
func (p *Probe) LogErr() error {
	if p.proc == nil {
		return nil
	}
	return p.proc.LogErr()
}

// Close ends the session and stops a launched OpenOCD; it is idempotent.
func (p *Probe) Close() error {
	err := p.Session.Close()
	if p.proc != nil {
		err = errors.Join(err, p.proc.Stop())
	}
	return err
}
