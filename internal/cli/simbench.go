package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hilrun/hilrun/pkg/gate"

	"github.com/hilrun/hilrun"
	"github.com/hilrun/hilrun/pkg/openocd"
	"github.com/hilrun/hilrun/pkg/plan"
	"github.com/hilrun/hilrun/pkg/proc/tmpdir"
	"github.com/hilrun/hilrun/pkg/sim"
	"github.com/hilrun/hilrun/pkg/sim/jtag"
	"github.com/hilrun/hilrun/pkg/sim/ocdtelnet"
	"github.com/hilrun/hilrun/pkg/steps"
)

// simBench is the virtual board with everything that reaches it: its serial
// console, its JTAG port, and an OpenOCD telnet server driving that port —
// the real OpenOCD when it is installed, else hilrun's stand-in.
type simBench struct {
	board *sim.Board
	jtag  *jtag.Server
	ocd   *openocd.Process
	stub  *ocdtelnet.Server
	// tmp holds OpenOCD's configuration and history; dir is its path.
	tmp    *tmpdir.Dir
	dir    string
	telnet string
	// probe is the address probes bind to: OpenOCD's Tcl RPC server
	// where it serves one (tcl://HOST:PORT), else telnet.
	probe string
	// camera is the URL of the board's camera stream, read by ffmpeg with
	// input format cameraFormat.
	camera string
	// note says, in one line, when memory is served by the stand-in.
	note string
	// elfDir holds the board's firmware image once elf wrote it.
	elfDir *tmpdir.Dir
}

// elf writes the virtual board's firmware image (whose symbols name its
// memory) to a private folder removed by Close, and returns its path.
func (b *simBench) elf() (string, error) {
	if b.elfDir == nil {
		d, err := tmpdir.New("sim-elf")
		if err != nil {
			return "", fmt.Errorf("make a folder for the virtual board's firmware image: %w", err)
		}
		b.elfDir = d
	}
	p := filepath.Join(b.elfDir.Path, "sim.elf")
	if err := os.WriteFile(p, hilrun.SimELF, 0o600); err != nil {
		return "", fmt.Errorf("write the virtual board's firmware image: %w", err)
	}
	return p, nil
}

// cameraFormat is the ffmpeg input format of the virtual board's camera:
// a Motion JPEG stream over HTTP, as IP cameras serve it.
const cameraFormat = "mpjpeg"

// startSimBench starts the board and its camera; with probes it also serves
// its memory through OpenOCD (or the stand-in).
//
// environ, when not nil, is the launched OpenOCD's whole environment (the
// MCP server's minimal one); nil means hilrun's own.
func startSimBench(ctx context.Context, opts sim.Options, probes bool, gates gate.Policy) (*simBench, error) {
	b := &simBench{board: sim.New(opts)}
	if err := b.board.Start(); err != nil {
		return nil, fmt.Errorf("start the virtual board: %w", err)
	}
	cam, err := b.board.StartCamera("")
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("start the virtual board's camera: %w", err)
	}
	b.camera = cam.URL() + sim.CameraStreamPath
	if !probes {
		return b, nil
	}
	if err := b.startProbe(ctx, gates); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

func (b *simBench) startProbe(ctx context.Context, gates gate.Policy) error {
	// The JTAG port and OpenOCD live as long as the bench, not the context
	// that started them.
	life := context.WithoutCancel(ctx)
	var err error
	b.jtag, err = jtag.Serve(life, b.board.Memory(), "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("serve the virtual board's JTAG port: %w", err)
	}
	if _, err := gates.Procs.LookPath("openocd", ""); err != nil {
		b.stub, err = ocdtelnet.Serve(life, b.board.Memory(), "127.0.0.1:0")
		if err != nil {
			return fmt.Errorf("serve the virtual board's memory: %w", err)
		}
		b.telnet = b.stub.Addr()
		b.probe = b.telnet
		b.note = "openocd is not installed: the virtual board's memory is served by hilrun's built-in stand-in for OpenOCD's telnet server"
		return nil
	}
	if b.tmp, err = tmpdir.New("sim"); err != nil {
		return err
	}
	b.dir = b.tmp.Path
	cfg := filepath.Join(b.dir, "sim.cfg")
	if err := os.WriteFile(cfg, []byte(jtag.OpenOCDConfig(b.jtag.Addr())), 0o644); err != nil {
		return err
	}
	b.ocd, err = openocd.Launch(ctx, openocd.LaunchConfig{
		Configs: []string{cfg},
		Dir:     b.dir,
		Procs:   gates.Procs,
		Dial:    gates.Dial,
		// OpenOCD's telnet server keeps its history in $HOME.
		Env: []string{"HOME=" + b.dir},
	})
	if err != nil {
		return fmt.Errorf("launch openocd for the virtual board: %w", err)
	}
	b.telnet, b.probe = b.ocd.TelnetAddr(), b.ocd.Addr()
	return nil
}

// bind returns a copy of seq with what nothing else binds pointed at the
// virtual board: devices without a port, probes that prepare attached to
// simAddr, cameras without an input. What the bench file or a flag bound
// stays bound; seq is not changed.
func (b *simBench) bind(seq *steps.Sequence) *steps.Sequence {
	seq = steps.CloneBindings(seq)
	k := 0
	for _, d := range seq.Devices {
		if d.Port == "" && d.USB == nil {
			d.Port, d.PortFrom = b.consolePath(k), "--sim"
			k++
		}
	}
	for _, p := range seq.Probes {
		if p.Backend() == "" || (p.OpenOCD == simAddr && p.Launch == nil && p.GDB == "") {
			p.AttachOpenOCD(b.probe)
		}
	}
	return steps.BindCameras(seq, b.camera, cameraFormat)
}

// consolePath is the port of the k-th device --sim binds: a console of its
// own while the board has one, else the first console, which the devices
// past the board's consoles share.
func (b *simBench) consolePath(k int) string {
	if k < b.board.Consoles() {
		return b.board.ConsolePath(k)
	}
	return b.board.SerialPath()
}

// maxSimConsoles bounds hilrun sim --consoles.
const maxSimConsoles = 8

// consolePaths are the paths of the board's consoles, the first one's
// SerialPath.
func (b *simBench) consolePaths() []string {
	paths := make([]string, b.board.Consoles())
	for i := range paths {
		paths[i] = b.board.ConsolePath(i)
	}
	return paths
}

// simConsoles is how many consoles a virtual board needs so that --sim
// gives every device it binds in plans a console of its own: the most
// devices without a port or a usb: match in one sequence, at least 1.
func simConsoles(plans []*plan.Plan) int {
	n := 1
	for _, pl := range plans {
		k := 0
		for _, d := range pl.Sequence().Devices {
			if d.Port == "" && d.USB == nil {
				k++
			}
		}
		n = max(n, k)
	}
	return n
}

// Close stops everything; it is idempotent.
func (b *simBench) Close() error {
	var errs []error
	if b.ocd != nil {
		errs = append(errs, b.ocd.Stop())
	}
	if b.stub != nil {
		errs = append(errs, b.stub.Close())
	}
	if b.jtag != nil {
		errs = append(errs, b.jtag.Close())
	}
	errs = append(errs, b.board.Close())
	if b.tmp != nil {
		b.tmp.Remove()
	}
	if b.elfDir != nil {
		b.elfDir.Remove()
	}
	return errors.Join(errs...)
}

// simImage writes the virtual board's firmware image into a private
// temporary folder the first time its path is asked for, so that --sim
// gives symbols to the probes it binds, in run as in the REPL.
type simImage struct {
	dir *tmpdir.Dir
	p   string
}

func (i *simImage) path() (string, error) {
	if i.p != "" {
		return i.p, nil
	}
	d, err := tmpdir.New("sim-elf")
	if err != nil {
		return "", fmt.Errorf("make a folder for the virtual board's firmware image: %w", err)
	}
	p := filepath.Join(d.Path, "sim.elf")
	if err := os.WriteFile(p, hilrun.SimELF, 0o600); err != nil {
		d.Remove()
		return "", fmt.Errorf("write the virtual board's firmware image: %w", err)
	}
	i.dir, i.p = d, p
	return p, nil
}

func (i *simImage) remove() {
	if i.dir != nil {
		i.dir.Remove()
	}
}
