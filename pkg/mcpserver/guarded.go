package mcpserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

// guarded is a pooled session as a sequence sees it: the server's memory
// policy applies, and closing it leaves the session open for the next user.
// It has no Unwrap on purpose: it guards the session's optional abilities
// (raw commands, images) by implementing them itself, and an Unwrap would
// let the runner reach them unchecked.
// benchFault says err means the probe's session broke (whatever its
// backend: its errors say BenchFault), so the next user opens a new one.
func benchFault(err error) bool {
	var bf interface{ BenchFault() bool }
	return errors.As(err, &bf) && bf.BenchFault()
}

type guarded struct {
	d      runner.Debugger
	policy *Policy
	// broke, when set, hears of every error that says the session broke.
	broke func()
	// tcl is true when the session's raw commands are OpenOCD Tcl, which
	// the policy parses; any other backend's raw commands need
	// --allow-debug-tcl.
	tcl bool
	// parse reads the session's Tcl commands as typed ones (the bench's
	// ParseCommand).
	parse runner.CommandParser
}

// seen passes err on, telling broke when it says the session broke.
func (g *guarded) seen(err error) error {
	if err != nil && g.broke != nil && benchFault(err) {
		g.broke()
	}
	return err
}

func (g *guarded) ReadMemory(ctx context.Context, addr uint64, width, count int) ([]uint64, error) {
	v, err := g.d.ReadMemory(ctx, addr, width, count)
	return v, g.seen(err)
}

func (g *guarded) WriteMemory(ctx context.Context, addr uint64, width int, values []uint64) error {
	if err := g.policy.CheckMemWrite(addr, uint64(width/8*len(values))); err != nil {
		return err
	}
	return g.seen(g.d.WriteMemory(ctx, addr, width, values))
}

func (g *guarded) Halt(ctx context.Context) error { return g.seen(g.d.Halt(ctx)) }

func (g *guarded) Resume(ctx context.Context) error { return g.seen(g.d.Resume(ctx)) }

func (g *guarded) Reset(ctx context.Context, mode string) error {
	return g.seen(g.d.Reset(ctx, mode))
}

// LastAccessHalted passes on whether the session stopped a running target
// for its last memory access.
func (g *guarded) LastAccessHalted() bool {
	a, ok := runner.DebuggerAs[runner.AccessReporter](g.d)
	return ok && a.LastAccessHalted()
}

// Command sends a raw command the policy allows: on OpenOCD a typed
// command written again from its parsed numbers, or any Tcl with
// --allow-debug-tcl; on any other backend only with --allow-debug-tcl.
func (g *guarded) Command(ctx context.Context, cmd string) (string, error) {
	rc, ok := runner.DebuggerAs[runner.RawCommander](g.d)
	if !ok {
		return "", fmt.Errorf("debugger command %q: this probe takes no raw commands", cmd)
	}
	send := cmd
	if g.tcl {
		var err error
		if send, err = g.policy.CheckCommand(g.parse, cmd); err != nil {
			return "", err
		}
	} else if err := g.policy.Allow(fmt.Sprintf("debugger command %q", cmd), steps.CapDebugRaw); err != nil {
		return "", err
	}
	out, err := rc.Command(ctx, send)
	return out, g.seen(err)
}

func (g *guarded) Close() error { return nil }

// checkImage applies the policy to writing the image at path into the
// target, and returns its real path under a root: an image may write
// anywhere, so a read-only server, or one that limits memory writes,
// refuses it.
func (g *guarded) checkImage(what, path string) (string, error) {
	if err := g.policy.Allow(what+" "+path, steps.CapMemWrite|steps.CapReadFiles); err != nil {
		return "", err
	}
	if len(g.policy.MemWrite) > 0 {
		return "", refused("%s %s: memory writes are limited by --allow-mem-write, and an image could write anywhere", what, path)
	}
	return g.policy.ResolveFile(path)
}

// LoadImage writes an image into target RAM.
func (g *guarded) LoadImage(ctx context.Context, path string, offset uint64) (string, error) {
	real, err := g.checkImage("load", path)
	if err != nil {
		return "", err
	}
	w, ok := runner.DebuggerAs[runner.ImageLoader](g.d)
	if !ok {
		return "", fmt.Errorf("load %s: this probe cannot load images", path)
	}
	out, err := w.LoadImage(ctx, real, offset)
	return out, g.seen(err)
}

// VerifyImage compares an image file under a root with target memory.
func (g *guarded) VerifyImage(ctx context.Context, path string, offset uint64) error {
	if err := g.policy.Allow("verify "+path, steps.CapReadFiles); err != nil {
		return err
	}
	real, err := g.policy.ResolveFile(path)
	if err != nil {
		return err
	}
	w, ok := runner.DebuggerAs[runner.ImageLoader](g.d)
	if !ok {
		return fmt.Errorf("verify %s: this probe cannot verify images", path)
	}
	return g.seen(w.VerifyImage(ctx, real, offset))
}

// Program writes an image into the target's flash.
func (g *guarded) Program(ctx context.Context, path string, verify, reset bool, offset uint64) (string, error) {
	real, err := g.checkImage("program", path)
	if err != nil {
		return "", err
	}
	w, ok := runner.DebuggerAs[runner.Programmer](g.d)
	if !ok {
		return "", fmt.Errorf("program %s: this probe cannot program images", path)
	}
	out, err := w.Program(ctx, real, verify, reset, offset)
	return out, g.seen(err)
}
