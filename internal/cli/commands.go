package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/hilrun/hilrun/pkg/serialx"
	"github.com/hilrun/hilrun/pkg/sim"
)

// needFiles is the argument rule of a command that takes sequence files:
// without any it says what to give it, instead of cobra's count of
// arguments.
func needFiles(verb string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return fmt.Errorf("give it a sequence file or a folder of them: hilrun %s seq.yaml (to try hilrun on the virtual board: hilrun %s --sim sequences/sim)", verb, verb)
		}
		return nil
	}
}

func newPortsCmd(ios *IO) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "ports",
		Short: "List serial ports with their USB identity",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ports, err := serialx.ListPorts()
			if err != nil {
				return infra(fmt.Errorf("list serial ports: %w", err))
			}
			if asJSON {
				enc := json.NewEncoder(ios.Out)
				enc.SetIndent("", "  ")
				if ports == nil {
					ports = []serialx.PortInfo{}
				}
				return enc.Encode(map[string]any{"ports": ports})
			}
			if len(ports) == 0 {
				fmt.Fprintln(ios.ErrOut, "no serial ports found")
				return nil
			}
			tw := tabwriter.NewWriter(ios.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "PORT\tVID:PID\tSERIAL\tPRODUCT")
			for _, p := range ports {
				id := "-"
				if p.IsUSB {
					id = p.VID + ":" + p.PID
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.Path, id, dash(p.SerialNumber), dash(p.Product))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// SimOptions are the inputs of hilrun sim.
type SimOptions struct {
	JSON       bool
	Latency    time.Duration
	LineEnding string
	Echo       bool
	Link       string
	// Consoles is how many consoles the board has, each on a pty of its
	// own.
	Consoles int
}

func newSimCmd(ios *IO) *cobra.Command {
	opts := &SimOptions{}
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "Run the virtual board until interrupted",
		Long: `Run the virtual board: a firmware-like shell on a pty (prompt "sim> ",
commands help, version, echo, led, status, reboot, panic, stream, peek, poke,
sleep) over a memory map, and a JTAG port (OpenOCD's remote_bitbang protocol)
to that memory, driven by an OpenOCD that hilrun launches when it is
installed. Point hilrun, a terminal program, telnet or any test at the
printed addresses. Runs until SIGINT or SIGTERM.

--consoles N gives the board N consoles, each a shell on a pty of its own
over the one memory map; tx TEXT on one prints rx TEXT on the others, a
radio link between boards. hang stops the board answering until it is
reset (a probe's reset) or power-cycled.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return Sim(cmd, ios, opts)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.JSON, "json", false, `print one JSON line, {"serial": PATH}, instead of text`)
	f.DurationVar(&opts.Latency, "latency", 0, "wait this long before each reply")
	f.StringVar(&opts.LineEnding, "line-ending", "crlf", "line ending of the board's output: crlf, lf or cr")
	f.BoolVar(&opts.Echo, "echo", false, "echo received characters, as a shell with echo on")
	f.StringVar(&opts.Link, "link", "", "keep a symlink at `PATH` pointing at the board's pty")
	f.IntVar(&opts.Consoles, "consoles", 1, "give the board `N` consoles, each on a pty of its own (1 to 8)")
	return cmd
}

// Sim runs the virtual board until the command's context ends or a signal
// arrives.
func Sim(cmd *cobra.Command, ios *IO, opts *SimOptions) error {
	switch opts.LineEnding {
	case "crlf", "lf", "cr":
	default:
		return invalid(fmt.Errorf("--line-ending must be crlf, lf or cr, not %q", opts.LineEnding))
	}
	if opts.Consoles < 1 || opts.Consoles > maxSimConsoles {
		return invalid(fmt.Errorf("--consoles %d: want 1 to %d", opts.Consoles, maxSimConsoles))
	}
	// From before the board starts: a signal while OpenOCD starts must
	// still remove what was started.
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	b, err := startSimBench(ctx, sim.Options{Latency: opts.Latency, LineEnding: opts.LineEnding, Echo: opts.Echo, Link: opts.Link, Consoles: opts.Consoles}, true, hostGates())
	if err != nil {
		if ctx.Err() != nil {
			return interrupted(fmt.Errorf("interrupted while starting the virtual board: %w", err))
		}
		return infra(err)
	}
	defer b.Close()
	if b.note != "" {
		fmt.Fprintln(ios.ErrOut, "hilrun: "+b.note)
	}
	if opts.JSON {
		info := map[string]any{
			"serial":         b.board.SerialPath(),
			"pty":            b.board.PtyPath(),
			"pid":            os.Getpid(),
			"remote_bitbang": b.jtag.Addr(),
			"openocd_telnet": b.telnet,
			"openocd":        b.ocd != nil,
			"camera":         b.camera,
			"consoles":       b.consolePaths(),
		}
		line, _ := json.Marshal(info)
		fmt.Fprintln(ios.Out, string(line))
	} else {
		fmt.Fprintf(ios.Out, "virtual board\n  serial console:        %s\n", b.board.SerialPath())
		for i, p := range b.consolePaths()[1:] {
			fmt.Fprintf(ios.Out, "  serial console %d:      %s\n", i+2, p)
		}
		fmt.Fprintf(ios.Out, "  JTAG (remote_bitbang): %s\n  OpenOCD telnet:        %s\n  camera (MJPEG):        %s\n(press Ctrl-C to stop)\n", b.jtag.Addr(), b.telnet, b.camera)
	}
	if f, ok := ios.Out.(interface{ Sync() error }); ok {
		f.Sync()
	}
	<-ctx.Done()
	if err := b.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
		return infra(err)
	}
	return nil
}
