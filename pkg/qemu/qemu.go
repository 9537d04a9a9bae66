// Package qemu starts QEMU as a virtual board for hilrun: the guest's first
// serial port on a pty, which hilrun opens like any serial port, and QEMU's
// GDB server on a free port of 127.0.0.1, which a GDB remote probe dials.
// QEMU runs in a process group of its own, ended by Close, and dies with
// hilrun.
package qemu

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/hilrun/hilrun/pkg/gate/process"
	"github.com/hilrun/hilrun/pkg/proc/child"
	"github.com/hilrun/hilrun/pkg/proc/tmpdir"
)

// DefaultBinary is the QEMU that Start runs when Spec.Binary is "".
const DefaultBinary = "qemu-system-arm"

// DefaultStopGrace is how long Close waits after SIGTERM before it kills
// QEMU.
const DefaultStopGrace = 3 * time.Second

// ErrNotInstalled is wrapped by Start's error when the QEMU binary is not
// found.
var ErrNotInstalled = errors.New("not installed")

// Spec describes a QEMU to start.
type Spec struct {
	// Binary is the QEMU executable, a path or a name looked up in PATH;
	// "" means DefaultBinary.
	Binary string
	// Machine is the emulated board, QEMU's -machine: "mps2-an385",
	// "virt". Required.
	Machine string
	// Kernel, if set, is the image QEMU loads and starts (-kernel): for a
	// Cortex-M machine an ELF file or a raw binary.
	Kernel string
	// BIOS, if set, is the firmware image the machine boots (-bios), as
	// U-Boot is on "virt".
	BIOS string
	// Args are extra arguments, after all the others.
	Args []string
	// Dir is QEMU's working directory; "" means hilrun's. Relative paths
	// in Args resolve against it; Kernel and BIOS resolve against hilrun's
	// working directory.
	Dir string
	// LogFile, if set, receives everything QEMU prints on stdout and
	// stderr, appended.
	LogFile string
	// StopGrace is how long Close waits after SIGTERM before it kills
	// QEMU; 0 means DefaultStopGrace.
	StopGrace time.Duration
	// Procs is the process gate's policy QEMU starts under (the zero
	// policy starts nothing).
	Procs process.Policy
}

// Instance is a running QEMU: the guest's first serial port on a pty
// (ConsolePath) and QEMU's GDB server on a Unix socket in a private folder
// (GDBAddr). Not a TCP port: anyone on the machine could connect to one,
// and through the GDB server's monitor commands run programs as hilrun's
// user; the folder (mode 0700) lets only that user in.
//
// QEMU drops what the guest prints while no one has the pty open, so the
// Instance holds it open from the start: output waits in the pty's buffer
// for the first reader, as on hilrun's virtual board. A guest that prints
// more than the buffer holds (some tens of KiB) before anyone reads waits,
// as behind a UART with flow control.
//
// QEMU's GDB server stops the guest when a debugger connects; Start does
// not connect to it.
type Instance struct {
	child   *child.Process
	machine string
	gdbAddr string      // the GDB server's socket
	dir     *tmpdir.Dir // holds the socket; removed by Close

	mu      sync.Mutex
	console string   // the pty, once QEMU announced it
	hold    *os.File // the pty, held open; see Instance
}

// Start starts QEMU and waits until the guest's serial port is on a pty and
// the GDB server listens. ctx bounds the start only: QEMU runs until Close.
// If QEMU exits first, the error quotes its last output lines ("-machine
// foo: unsupported machine type").
func Start(ctx context.Context, spec Spec) (*Instance, error) {
	if spec.Binary == "" {
		spec.Binary = DefaultBinary
	}
	if spec.StopGrace <= 0 {
		spec.StopGrace = DefaultStopGrace
	}
	if spec.Machine == "" {
		return nil, errors.New("start qemu: no machine given (such as mps2-an385 or virt)")
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("start qemu: %w", err)
	}
	bin, err := spec.Procs.LookPath(spec.Binary, "")
	if err != nil {
		return nil, fmt.Errorf("start qemu: %s is %w (Debian: apt-get install %s): %w", spec.Binary, ErrNotInstalled, debianPackage(spec.Binary), err)
	}
	spec.Binary = bin
	for _, f := range []struct {
		what string
		path *string
	}{{"kernel", &spec.Kernel}, {"bios", &spec.BIOS}} {
		if *f.path == "" {
			continue
		}
		if err := checkImage(f.what, f.path); err != nil {
			return nil, fmt.Errorf("start qemu: %w", err)
		}
	}
	dir, err := tmpdir.New("qemu")
	if err != nil {
		return nil, fmt.Errorf("start qemu: %w", err)
	}
	// Absolute: QEMU runs in spec.Dir, and TMPDIR may be relative.
	sock, err := filepath.Abs(filepath.Join(dir.Path, "gdb"))
	if err != nil {
		dir.Remove()
		return nil, fmt.Errorf("start qemu: %w", err)
	}
	if len(sock) >= maxSocketPath {
		dir.Remove()
		return nil, fmt.Errorf("start qemu: the GDB socket's path %s is longer than a Unix socket allows (%d bytes): set TMPDIR to a shorter folder", sock, maxSocketPath-1)
	}
	in, err := start(spec, sock)
	if err != nil {
		dir.Remove()
		return nil, err
	}
	in.dir = dir
	if err := in.waitReady(ctx); err != nil {
		in.Close(context.Background())
		return nil, err
	}
	return in, nil
}

// maxSocketPath is the smallest size of sun_path (104 bytes on macOS and
// the BSDs, 108 on Linux): a Unix socket's path is shorter.
const maxSocketPath = 104

// debianPackage names the Debian package of a QEMU binary.
func debianPackage(bin string) string {
	name := filepath.Base(bin)
	switch {
	case strings.HasPrefix(name, "qemu-system-arm"), strings.HasPrefix(name, "qemu-system-aarch64"):
		return "qemu-system-arm"
	case strings.HasPrefix(name, "qemu-system-x86"), strings.HasPrefix(name, "qemu-system-i386"):
		return "qemu-system-x86"
	case strings.HasPrefix(name, "qemu-system-"):
		return "qemu-system"
	}
	return "qemu-system-arm"
}

// checkImage makes *path absolute and checks it is a readable file, so a
// missing image is named before QEMU starts.
func checkImage(what string, path *string) error {
	abs, err := filepath.Abs(*path)
	if err != nil {
		return fmt.Errorf("%s %s: %w", what, *path, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path comes first
		}
		return fmt.Errorf("%s %s: %w", what, abs, err)
	}
	if fi.IsDir() {
		return fmt.Errorf("%s %s: is a directory", what, *path)
	}
	*path = abs
	return nil
}

// argv returns QEMU's arguments for a GDB server on the Unix socket sock.
func (spec *Spec) argv(sock string) []string {
	a := []string{
		"-machine", spec.Machine,
		"-display", "none",
		"-monitor", "none",
		"-serial", "pty",
		// A comma in an option value is written twice.
		"-chardev", "socket,id=hilrun-gdb,server=on,wait=off,path=" + strings.ReplaceAll(sock, ",", ",,"),
		"-gdb", "chardev:hilrun-gdb",
	}
	if spec.Kernel != "" {
		a = append(a, "-kernel", spec.Kernel)
	}
	if spec.BIOS != "" {
		a = append(a, "-bios", spec.BIOS)
	}
	return append(a, spec.Args...)
}

func start(spec Spec, sock string) (*Instance, error) {
	in := &Instance{
		machine: spec.Machine,
		gdbAddr: sock,
	}
	c, err := child.Start(spec.Procs, process.Spec{Purpose: process.Emulator, Argv: append([]string{spec.Binary}, spec.argv(sock)...), Dir: spec.Dir}, child.Config{
		Name:    "qemu",
		OnLine:  in.sawLine,
		LogFile: spec.LogFile,
		Grace:   spec.StopGrace,
		// Killed when hilrun dies, however it dies.
		Watch: true,
	})
	if err != nil {
		return nil, fmt.Errorf("start qemu: %w", err)
	}
	in.child = c
	return in, nil
}

// ptyLine matches the line QEMU prints when it puts the guest's first
// serial port on a pty.
var ptyLine = regexp.MustCompile(`char device redirected to (/dev/\S+) \(label serial0\)`)

func (in *Instance) sawLine(line string) {
	m := ptyLine.FindStringSubmatch(line)
	if m == nil {
		return
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.console != "" {
		return
	}
	in.console = m[1]
	// Hold the pty open so QEMU keeps what the guest prints (see
	// Instance). Should it fail, output before the first reader is lost,
	// as it would be without.
	if f, err := os.OpenFile(m[1], os.O_RDWR|syscallNoctty, 0); err == nil {
		in.hold = f
	}
}

// waitReady waits until QEMU announced the pty and its GDB server listens.
func (in *Instance) waitReady(ctx context.Context) error {
	start := time.Now()
	backoff := 5 * time.Millisecond
	for {
		select {
		case <-in.child.Done():
			return fmt.Errorf("start qemu -machine %s: %w", in.machine, in.child.Exited("before it was ready"))
		case <-ctx.Done():
			var missing []string
			if in.ConsolePath() == "" {
				missing = append(missing, "no serial pty announced")
			}
			if !in.listening() {
				missing = append(missing, "gdb server not listening on "+in.gdbAddr)
			}
			return fmt.Errorf("start qemu -machine %s: not ready after %v (%s): %w%s", in.machine, time.Since(start).Round(time.Millisecond), strings.Join(missing, ", "), ctx.Err(), in.child.LastWords())
		default:
		}
		if in.ConsolePath() != "" && in.listening() {
			return nil
		}
		select {
		case <-time.After(backoff):
		case <-in.child.Done():
		case <-ctx.Done():
		}
		backoff = min(2*backoff, 100*time.Millisecond)
	}
}

// listening reports whether QEMU's GDB server listens, without connecting:
// QEMU stops the guest when a debugger connects. QEMU makes the socket
// before it runs the guest, and no one else can make one in its folder.
func (in *Instance) listening() bool {
	fi, err := os.Lstat(in.gdbAddr)
	return err == nil && fi.Mode()&os.ModeSocket != 0
}

// ConsolePath returns the pty of the guest's first serial port, such as
// /dev/pts/3.
func (in *Instance) ConsolePath() string {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.console
}

// GDBAddr returns the path of the Unix socket of QEMU's GDB server; a
// probe's gdb: takes it as it is.
func (in *Instance) GDBAddr() string { return in.gdbAddr }

// Pid returns QEMU's process ID, which is also its process group's.
func (in *Instance) Pid() int { return in.child.Pid() }

// Done is closed when QEMU has exited.
func (in *Instance) Done() <-chan struct{} { return in.child.Done() }

// Err returns how QEMU exited, once Done is closed; nil before.
func (in *Instance) Err() error { return in.child.Err() }

// Output returns the last lines QEMU printed.
func (in *Instance) Output() string { return in.child.Output() }

// Close ends QEMU and everything in its process group: SIGTERM, then
// SIGKILL after Spec.StopGrace or when ctx ends, whichever comes first. It
// returns once QEMU has exited, and releases the pty. Close is idempotent.
// An exit forced by Close is not an error: it returns nil, or the error of
// Spec.LogFile if the log lost bytes.
func (in *Instance) Close(ctx context.Context) error {
	in.child.Stop(ctx)
	in.mu.Lock()
	if in.hold != nil {
		in.hold.Close()
		in.hold = nil
	}
	in.dir.Remove()
	in.mu.Unlock()
	return in.LogErr()
}

// LogErr returns nil when Spec.LogFile holds all QEMU printed (or there is
// none), else an error saying how many bytes it lost.
func (in *Instance) LogErr() error { return in.child.LogErr() }
