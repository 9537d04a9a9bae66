package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/hilrun/hilrun/pkg/gate/process"
	"github.com/hilrun/hilrun/pkg/qemu"
	"github.com/hilrun/hilrun/pkg/steps"
)

// QEMU as a virtual board, two ways:
//
//   - a probe's launch: {qemu: {...}} starts a QEMU for that probe and
//     sequence (StartQEMU): the probe is attached to QEMU's GDB server and
//     the device the launch names as its console to the guest's first
//     serial port;
//   - hilrun run --qemu FILE starts one QEMU for the whole run (QEMUBoard),
//     to which the devices and probes that nothing else binds go, as
//     --sim does with the built-in board.
//
// Binding never changes the loaded sequence: the board returns a bound
// copy, as --sim does, before anything opens; a probe's launch binds a
// copy of the sequence, which the runner then runs
// (runner.Options.Prepare).

// QEMUPending is the GDB address of a probe that hilrun run --qemu binds
// once its QEMU runs (ReserveQEMU): it passes the checks that run before
// QEMU starts, and QEMUBoard.Bind replaces it.
const QEMUPending = "qemu:pending"

// QEMUOptions are what the command starting QEMUs decides for them.
type QEMUOptions struct {
	// LogDir receives each QEMU's output, as qemu-NAME.log (NAME the
	// probe's, or "board" for the --qemu board); "" keeps none.
	LogDir string
	// Procs is the process policy QEMUs start under.
	Procs process.Policy
}

func (o QEMUOptions) logFile(name string) string {
	if o.LogDir == "" {
		return ""
	}
	return filepath.Join(o.LogDir, "qemu-"+name+".log")
}

// QEMUs are the QEMUs started for one sequence's probes.
type QEMUs struct {
	list []*qemu.Instance
}

// StartQEMU starts a QEMU for every probe of seq that launches one, and
// returns a copy of seq in which the probe is attached to its QEMU's GDB
// server and the launch's console device bound to the guest's first
// serial port; seq itself is left as it was. A sequence that launches no
// QEMU is returned as it is. ctx bounds the start only; the QEMUs run
// until Close. On error, the QEMUs already started are stopped. An error
// wrapping qemu.ErrNotInstalled means QEMU is missing.
func StartQEMU(ctx context.Context, seq *steps.Sequence, o QEMUOptions) (*steps.Sequence, *QEMUs, error) {
	qs := &QEMUs{}
	var bound *steps.Sequence
	for i, p := range seq.Probes {
		if !p.LaunchesQEMU() {
			continue
		}
		if bound == nil {
			bound = steps.CloneBindings(seq)
		}
		l := p.Launch.QEMU
		in, err := qemu.Start(ctx, qemu.Spec{
			Binary: l.Binary, Machine: l.Machine, Kernel: l.Kernel, BIOS: l.BIOS, Args: l.Args,
			Dir:     filepath.Dir(l.Pos.File),
			LogFile: o.logFile(p.Name),
			Procs:   o.Procs,
		})
		if err != nil {
			qs.Close(context.Background())
			return nil, nil, fmt.Errorf("%s: probe %s: %w", l.Pos, p.Name, err)
		}
		qs.list = append(qs.list, in)
		bound.Probes[i].AttachGDB(in.GDBAddr())
		if d := bound.Device(l.Console); d != nil {
			d.Port, d.USB = in.ConsolePath(), nil
		}
	}
	if bound == nil {
		return seq, qs, nil
	}
	return bound, qs, nil
}

// prepareQEMU is the runner's Prepare (runner.Options): the QEMUs a
// sequence launches start before its consoles open and stop once they are
// closed, whatever the outcome; what stopping one reports goes to warn.
func prepareQEMU(o QEMUOptions, warn func(string)) func(ctx context.Context, seq *steps.Sequence) (*steps.Sequence, func(), error) {
	return func(ctx context.Context, seq *steps.Sequence) (*steps.Sequence, func(), error) {
		bound, qs, err := StartQEMU(ctx, seq, o)
		if err != nil {
			return nil, nil, err
		}
		if len(qs.list) == 0 {
			return seq, nil, nil
		}
		return bound, func() {
			if err := qs.Close(context.Background()); err != nil && warn != nil {
				warn(fmt.Sprintf("stop qemu: %v", err))
			}
		}, nil
	}
}

// Close stops every QEMU, waiting until each has exited; it is idempotent
// and takes a nil QEMUs. ctx cuts each one's grace period after SIGTERM
// short.
func (qs *QEMUs) Close(ctx context.Context) error {
	if qs == nil {
		return nil
	}
	var errs []error
	for _, in := range qs.list {
		errs = append(errs, in.Close(ctx))
	}
	return errors.Join(errs...)
}

// LaunchBinds reports whether a probe of seq launches a QEMU whose serial
// port device dev gets when the run starts.
func LaunchBinds(seq *steps.Sequence, dev string) bool {
	for _, p := range seq.Probes {
		if p.LaunchesQEMU() && p.Launch.QEMU.Console == dev {
			return true
		}
	}
	return false
}

// checkQEMU checks, before anything starts, what a probe's QEMU launch
// needs from the bench: its images are files, and its console device is
// one of the sequence's with no port given elsewhere (by the bench file or
// --port).
func checkQEMU(seq *steps.Sequence, p *steps.Probe) steps.ErrorList {
	var errs steps.ErrorList
	l := p.Launch.QEMU
	for _, f := range []struct{ key, path string }{{"kernel", l.Kernel}, {"bios", l.BIOS}} {
		if f.path == "" {
			continue
		}
		if err := checkImage(f.path); err != nil {
			errs = append(errs, &steps.Error{Pos: l.Pos, Msg: fmt.Sprintf("probe %s: qemu %s: %v", p.Name, f.key, err), Missing: missing(f.path, err)})
		}
	}
	if l.Console == "" {
		return errs
	}
	switch d := seq.Device(l.Console); {
	case d == nil:
		errs = append(errs, &steps.Error{Pos: l.Pos, Msg: fmt.Sprintf("probe %s: qemu console: the sequence has no device %q", p.Name, l.Console)})
	case d.Port != "" || d.USB != nil:
		where := d.Port
		if where == "" {
			where = "a USB device"
		}
		errs = append(errs, &steps.Error{Pos: l.Pos, Msg: fmt.Sprintf("probe %s: qemu console: device %s is bound to %s too (by the bench file or --port), and the launch binds it to QEMU's serial port: give one of them", p.Name, d.Name, where)})
	}
	return errs
}

// missing is path when err says only that it does not exist, else "".
func missing(path string, err error) string {
	if errors.Is(err, fs.ErrNotExist) {
		return path
	}
	return ""
}

// checkImage says why path is not a file QEMU can load, or nil.
func checkImage(path string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%s does not exist (build it first): %w", path, fs.ErrNotExist)
	case err != nil:
		return err
	case fi.IsDir():
		return fmt.Errorf("%s is a folder, want a file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	return f.Close()
}

// QEMUBoard is one QEMU started for a whole run from hilrun's flags
// (hilrun run --qemu FILE): the devices and probes that nothing else binds
// go to it.
type QEMUBoard struct {
	in *qemu.Instance
}

// CheckQEMUImages checks, before anything starts, that the images of spec
// are files: the errors name the flag that gave each.
func CheckQEMUImages(spec qemu.Spec, kernelFlag, biosFlag string) error {
	var errs []error
	if spec.Kernel == "" && spec.BIOS == "" {
		errs = append(errs, fmt.Errorf("%s FILE or %s FILE: QEMU needs an image to run", kernelFlag, biosFlag))
	}
	for _, f := range []struct{ flag, path string }{{kernelFlag, spec.Kernel}, {biosFlag, spec.BIOS}} {
		if f.path == "" {
			continue
		}
		if err := checkImage(f.path); err != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w", f.flag, f.path, err))
		}
	}
	return errors.Join(errs...)
}

// ReserveQEMU marks what the --qemu board will bind in seq, so that the
// checks before QEMU starts pass: every probe bound to nothing gets the
// address QEMUPending (and the kernel as its ELF file when it has none and
// the kernel is one), and the device with no port is counted. More than
// one device with no port is an error: the guest has one console. It
// returns a copy of seq so marked; seq is not changed.
func ReserveQEMU(seq *steps.Sequence, kernel string) (*steps.Sequence, error) {
	var unbound []string
	for _, d := range seq.Devices {
		if d.Port == "" && d.USB == nil {
			unbound = append(unbound, d.Name)
		}
	}
	if len(unbound) > 1 {
		return nil, fmt.Errorf("%s: devices %v have no port, and --qemu binds one device to QEMU's serial port: bind the others with --port or the bench file", seq.File, unbound)
	}
	elf := isELF(kernel)
	seq = steps.CloneBindings(seq)
	for _, p := range seq.Probes {
		if p.Backend() != "" {
			continue
		}
		p.AttachGDB(QEMUPending)
		if p.ELF == "" && elf {
			p.ELF = kernel
		}
	}
	return seq, nil
}

// isELF reports whether path begins with the ELF magic number.
func isELF(path string) bool {
	if path == "" {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var magic [4]byte
	if _, err := f.Read(magic[:]); err != nil {
		return false
	}
	return bytes.Equal(magic[:], []byte("\x7fELF"))
}

// StartQEMUBoard starts QEMU with spec for the whole run; its log goes
// under o.LogDir. ctx bounds the start only. An error wrapping
// qemu.ErrNotInstalled means QEMU is missing.
func StartQEMUBoard(ctx context.Context, spec qemu.Spec, o QEMUOptions) (*QEMUBoard, error) {
	spec.LogFile = o.logFile("board")
	spec.Procs = o.Procs
	in, err := qemu.Start(ctx, spec)
	if err != nil {
		return nil, err
	}
	return &QEMUBoard{in: in}, nil
}

// Bind points what ReserveQEMU reserved in seq at the board, as --sim
// binds its board: the device with no port at the guest's serial port,
// the probes bound to nothing at QEMU's GDB server. It returns the bound
// copy; seq is not changed.
func (b *QEMUBoard) Bind(seq *steps.Sequence) *steps.Sequence {
	seq = steps.CloneBindings(seq)
	for _, d := range seq.Devices {
		if d.Port == "" && d.USB == nil {
			d.Port = b.in.ConsolePath()
		}
	}
	for _, p := range seq.Probes {
		if p.GDB == QEMUPending || p.Backend() == "" {
			p.AttachGDB(b.in.GDBAddr())
		}
	}
	return seq
}

// Instance is the board's QEMU.
func (b *QEMUBoard) Instance() *qemu.Instance { return b.in }

// Close stops QEMU and waits until it has exited; it is idempotent.
func (b *QEMUBoard) Close(ctx context.Context) error { return b.in.Close(ctx) }
