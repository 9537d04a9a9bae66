package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/hilrun/hilrun/internal/engine"
	"github.com/hilrun/hilrun/pkg/gate"
	"github.com/hilrun/hilrun/pkg/qemu"
)

// QEMUFlags are the flags that start a QEMU as the virtual board of a run
// (hilrun run --qemu FILE).
type QEMUFlags struct {
	// Kernel is --qemu: the firmware QEMU loads (-kernel).
	Kernel string
	// Machine is --qemu-machine, QEMU's -machine.
	Machine string
	// BIOS is --qemu-bios, the firmware the machine boots (-bios), such
	// as U-Boot on virt.
	BIOS string
	// Binary is --qemu-binary, the QEMU program.
	Binary string
	// Args are --qemu-arg, more QEMU arguments.
	Args []string
}

// DefaultQEMUMachine is the machine of --qemu: the one hilrun's own
// firmware (firmware/qemu) is built for.
const DefaultQEMUMachine = "mps2-an385"

func (q *QEMUFlags) register(f *pflag.FlagSet) {
	f.StringVar(&q.Kernel, "qemu", "", "start QEMU with firmware `FILE` (-kernel, an ELF file or a raw binary) as the virtual board: the device and the probes nothing else binds go to its serial port and GDB server")
	f.StringVar(&q.Machine, "qemu-machine", DefaultQEMUMachine, "the `MACHINE` QEMU emulates for --qemu or --qemu-bios (virt for U-Boot)")
	f.StringVar(&q.BIOS, "qemu-bios", "", "start QEMU booting firmware `FILE` (-bios), such as U-Boot: /usr/lib/u-boot/qemu_arm/u-boot.bin with --qemu-machine virt")
	f.StringVar(&q.Binary, "qemu-binary", qemu.DefaultBinary, "the QEMU `PROGRAM` to run for --qemu or --qemu-bios")
	f.StringArrayVar(&q.Args, "qemu-arg", nil, "one more QEMU `ARGUMENT` for --qemu or --qemu-bios (repeatable)")
}

// spec is the QEMU the flags ask for, or nil when they ask for none. A
// missing image is invalid input, found before anything starts, as is
// --sim beside --qemu.
func (q *QEMUFlags) spec(sim bool) (*qemu.Spec, error) {
	if q.Kernel == "" && q.BIOS == "" {
		return nil, nil
	}
	if sim {
		return nil, errors.New("--sim and --qemu/--qemu-bios each start a virtual board: give one of them")
	}
	s := &qemu.Spec{Binary: q.Binary, Machine: q.Machine, Args: q.Args}
	for _, f := range []struct {
		in  string
		out *string
	}{{q.Kernel, &s.Kernel}, {q.BIOS, &s.BIOS}} {
		if f.in == "" {
			continue
		}
		abs, err := filepath.Abs(f.in)
		if err != nil {
			return nil, err
		}
		*f.out = abs
	}
	if err := engine.CheckQEMUImages(*s, "--qemu", "--qemu-bios"); err != nil {
		return nil, err
	}
	return s, nil
}

// startQEMUBoard starts the QEMU of spec for the run. A signal during the
// start (ctx done) is an interruption, QEMU missing or failing to start a
// bench error.
func startQEMUBoard(ctx context.Context, errOut io.Writer, spec qemu.Spec, logDir string, gates gate.Policy) (*engine.QEMUBoard, error) {
	b, err := engine.StartQEMUBoard(ctx, spec, engine.QEMUOptions{LogDir: logDir, Procs: gates.Procs})
	if err != nil {
		if ctx.Err() != nil {
			return nil, interrupted(fmt.Errorf("interrupted while starting QEMU: %w", err))
		}
		return nil, infra(err)
	}
	fmt.Fprintf(errOut, "hilrun: QEMU %s runs: console %s, GDB server %s\n", spec.Machine, b.Instance().ConsolePath(), b.Instance().GDBAddr())
	return b, nil
}
