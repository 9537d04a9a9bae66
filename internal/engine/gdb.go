package engine

import (
	"context"
	"fmt"

	"github.com/hilrun/hilrun/pkg/gdbremote"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

// openGDB opens one persistent GDB remote session to the stub at the
// probe's address: HOST:PORT, or a serial device such as a Black Magic
// Probe's. The probe's attach mode says whether the target ran before
// (gdbAttachMode).
func openGDB(ctx context.Context, p *steps.Probe, o ProbeOptions) (runner.Debugger, error) {
	switch {
	case p.GDB == "" && p.LaunchesQEMU():
		return nil, fmt.Errorf("probe %s launches QEMU, which only hilrun run and hilrun repl start: start QEMU yourself and give the probe gdb: HOST:PORT", p.Name)
	case p.GDB == QEMUPending:
		return nil, fmt.Errorf("probe %s waits for the QEMU of --qemu, which has not started", p.Name)
	}
	s, err := gdbremote.Dial(ctx, p.GDB, gdbremote.Options{Attach: gdbAttachMode(p.GDBAttach), Dial: o.Gates.Dial, Devices: o.Gates.Devices})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// gdbAttachMode maps a probe's attach mode (steps.GDBAttachRunning, ...)
// to the session's: running resumes the target after attaching and after
// every access and detaches at the end; halted leaves it as the attach
// left it; auto, and "", trust the stub's stop reply (QEMU's).
func gdbAttachMode(mode string) gdbremote.AttachMode {
	switch mode {
	case steps.GDBAttachRunning:
		return gdbremote.AttachRunning
	case steps.GDBAttachHalted:
		return gdbremote.AttachHalted
	}
	return gdbremote.AttachAuto
}
