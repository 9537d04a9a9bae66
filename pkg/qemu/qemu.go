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
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hilrun/hilrun/internal/child"
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
}

// Instance is a running QEMU: the guest's first serial port on a pty
// (ConsolePath) and QEMU's GDB server listening on 127.0.0.1 (GDBAddr).
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
	gdbAddr string

	mu      sync.Mutex
	console string   // the pty, once QEMU announced it
	hold    *os.File // the pty, held open; see Instance
}

// Start starts QEMU and waits until the guest's serial port is on a pty and
// the GDB server listens. ctx bounds the start only: QEMU runs until Close.
// If QEMU exits first, the error quotes its last output lines ("-machine
// foo: unsupported machine type").
func Start(ctx context.Context, spec Spec) (*Instance, error) {
	return startWith(ctx, spec, freePort)
}

// startWith is Start choosing ports with ports.
func startWith(ctx context.Context, spec Spec, ports func() (int, error)) (*Instance, error) {
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
	bin, err := exec.LookPath(spec.Binary)
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
	// A port found free may be taken before QEMU binds it: then QEMU exits
	// saying so, and another port is tried.
	const attempts = 3
	for i := 1; ; i++ {
		port, err := ports()
		if err != nil {
			return nil, fmt.Errorf("start qemu: find a free port: %w", err)
		}
		in, err := start(spec, port)
		if err != nil {
			return nil, err
		}
		err = in.waitReady(ctx)
		if err == nil {
			return in, nil
		}
		in.Close(context.Background())
		if i < attempts && in.portTaken() {
			continue
		}
		return nil, err
	}
}

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

// argv returns QEMU's arguments for a GDB server on port.
func (spec *Spec) argv(port int) []string {
	a := []string{
		"-machine", spec.Machine,
		"-display", "none",
		"-monitor", "none",
		"-serial", "pty",
		"-gdb", "tcp:127.0.0.1:" + strconv.Itoa(port),
	}
	if spec.Kernel != "" {
		a = append(a, "-kernel", spec.Kernel)
	}
	if spec.BIOS != "" {
		a = append(a, "-bios", spec.BIOS)
	}
	return append(a, spec.Args...)
}

func start(spec Spec, port int) (*Instance, error) {
	in := &Instance{
		machine: spec.Machine,
		gdbAddr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
	}
	cmd := exec.Command(spec.Binary, spec.argv(port)...)
	cmd.Dir = spec.Dir
	c, err := child.Start(cmd, child.Config{
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
// QEMU stops the guest when a debugger connects.
func (in *Instance) listening() bool {
	_, port, _ := net.SplitHostPort(in.gdbAddr)
	p, _ := strconv.Atoi(port)
	return listening(in.child.Pid(), p)
}

// ConsolePath returns the pty of the guest's first serial port, such as
// /dev/pts/3.
func (in *Instance) ConsolePath() string {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.console
}

// GDBAddr returns the address of QEMU's GDB server, 127.0.0.1:PORT.
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
	in.mu.Unlock()
	return in.LogErr()
}

// LogErr returns nil when Spec.LogFile holds all QEMU printed (or there is
// none), else an error saying how many bytes it lost.
func (in *Instance) LogErr() error { return in.child.LogErr() }

// freePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// portTaken reports whether QEMU said it could not listen on the GDB port:
// "-gdb tcp:127.0.0.1:37743: Failed to find an available port: Address
// already in use" (QEMU 7.2), "Failed to bind socket" (older releases).
func (in *Instance) portTaken() bool {
	for _, l := range in.child.Lines() {
		if strings.Contains(l, "-gdb tcp:") &&
			(strings.Contains(l, "in use") || strings.Contains(l, "available port") || strings.Contains(l, "bind")) {
			return true
		}
	}
	return false
}
