package mcpserver

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

// devicePlan is how a device of a sequence is reached: an open connection
// it borrows, or a port it opens for the run.
type devicePlan struct {
	conn *connection
	port string
}

// borrowed is an open connection lent to a run: the run must not close it.
type borrowed struct {
	Console
	c *connection
}

func (borrowed) Close() error { return nil }

// CatchUp waits until what the connection's port holds is in its buffer,
// so a send's reply begins after it (see runner's catchUpper). A
// connection without the ability returns its cursor. The runner never
// syncs a borrowed connection: this run did not open it.
func (b borrowed) CatchUp(ctx context.Context) (int64, error) {
	if cu, ok := b.Console.(interface {
		CatchUp(context.Context) (int64, error)
	}); ok {
		return cu.CatchUp(ctx)
	}
	return b.Cursor(), nil
}

// LastSend is where the reply to the last send on the connection began, in
// this run or an earlier one: the runner waits for the prompt after it.
func (b borrowed) LastSend() (runner.SendMark, bool) {
	b.c.mu.Lock()
	defer b.c.mu.Unlock()
	return b.c.lastSend, b.c.sent
}

// SetLastSend keeps m for the next run on the connection.
func (b borrowed) SetLastSend(m runner.SendMark) {
	b.c.mu.Lock()
	b.c.lastSend, b.c.sent = m, true
	b.c.mu.Unlock()
}

// lend gives device d the prompt and echo of connection c, unless the
// sequence sets them.
func lend(d *steps.Device, c *connection) {
	if d.LineEnding == "" {
		d.LineEnding = c.lineEnding
	}
	if d.Prompt == nil {
		d.Prompt = c.prompt
	}
	if !d.Echo {
		d.Echo = c.echo
	}
}

// Unwrap is the connection's console, for the runner's modem line steps.
func (b borrowed) Unwrap() runner.Console { return b.Console }

func (s *Server) planDevices(ctx context.Context, seq *steps.Sequence) (map[string]devicePlan, error) {
	plans := map[string]devicePlan{}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range seq.Devices {
		if c := s.findConnLocked(d.Name); c != nil && (d.Port == "" || d.Port == c.port || d.Implicit) {
			lend(d, c)
			plans[d.Name] = devicePlan{conn: c, port: c.port}
			continue
		}
		if d.Port == "" && d.USB != nil {
			p, err := s.resolveUSB(ctx, d)
			if err != nil {
				return nil, fmt.Errorf("device %s: %w", d.Name, err)
			}
			d.Port = p
		}
		if d.Port == "" {
			if s.cfg.DefaultPort == "" {
				return nil, fmt.Errorf("device %s has no port: open a connection with serial_open and name it in to:, give to: a port path, pass devices: {%s: {port: PATH}}, or start hilrun mcp with --sim or a --bench binding it", d.Name, d.Name)
			}
			d.Port = s.cfg.DefaultPort
		}
		if c := s.findConnLocked(d.Port); c != nil {
			lend(d, c)
			plans[d.Name] = devicePlan{conn: c, port: c.port}
			continue
		}
		if err := s.checkPort(d.Port); err != nil {
			return nil, err
		}
		plans[d.Name] = devicePlan{port: d.Port}
	}
	return plans, nil
}

// plansCurrent reports whether plans still match the open connections:
// false when a port the run would open has been opened as a connection
// since (plan again to borrow it), an error when a connection the run
// would borrow has been closed.
func (s *Server) plansCurrent(plans map[string]devicePlan) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, name := range slices.Sorted(maps.Keys(plans)) {
		p := plans[name]
		if p.conn != nil && s.conns[p.conn.id] != p.conn {
			return false, fmt.Errorf("device %s: connection %s (%s) was closed while this sequence waited for its ports", name, p.conn.id, p.conn.port)
		}
	}
	for _, p := range plans {
		if p.conn == nil && s.findConnLocked(p.port) != nil {
			return false, nil
		}
	}
	return true, nil
}

// checkSteps applies the policy to the steps before anything is opened:
// what each step can do (its capabilities in the kind table) must be
// allowed, and the files and folders it names must lie under a root. A
// step whose kind the table does not describe is refused.
