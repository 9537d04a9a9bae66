package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/hilrun/hilrun/pkg/usbsys"
)

func newBenchCmd(ios *IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Work with bench files: find the boards attached",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newBenchDiscoverCmd(ios))
	return cmd
}

// DiscoverOptions are the inputs of hilrun bench discover.
type DiscoverOptions struct {
	// Sysfs is the sysfs tree to read: /sys, or a recorded one.
	Sysfs string
	// Write, if not "", is the bench file to write.
	Write string
	// Force replaces an existing Write file.
	Force bool
}

func newBenchDiscoverCmd(ios *IO) *cobra.Command {
	opts := &DiscoverOptions{}
	cmd := &cobra.Command{
		Use:   "discover",
		Short: "List the USB serial consoles and debug probes attached, grouped into boards",
		Long: `List the USB serial consoles and debug probes (ST-Link, J-Link, CMSIS-DAP,
Black Magic Probe) attached to this machine, grouped into boards: the
console and probe of one USB device make a board, and so do a console and
a probe that are the only devices behind a hub. Each board is printed with
the reason for its grouping. --write FILE writes a bench file that finds
each console with a usb: {vid, pid, serial} matcher and each probe by its
serial number, so the bench survives re-enumeration. Linux only: it reads
sysfs, or with --sysfs DIR a recorded sysfs tree.`,
		Example: `  hilrun bench discover
  hilrun bench discover --write hilrun.bench.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return Discover(ios, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Sysfs, "sysfs", "/sys", "read the sysfs tree under `DIR` (a recorded one, for tests and bug reports)")
	f.StringVar(&opts.Write, "write", "", "write a bench file for the boards found to `FILE`")
	f.BoolVar(&opts.Force, "force", false, "with --write, replace FILE if it exists")
	return cmd
}

// Discover lists the boards of opts.Sysfs and writes their bench file.
func Discover(ios *IO, opts *DiscoverOptions) error {
	fi, err := os.Stat(opts.Sysfs)
	if err != nil || !fi.IsDir() {
		if err == nil {
			err = errors.New("not a folder")
		}
		return invalid(fmt.Errorf("--sysfs %s: %w", opts.Sysfs, err))
	}
	tree, err := usbsys.Scan(os.DirFS(opts.Sysfs))
	if err != nil {
		return infra(fmt.Errorf("read the USB devices under %s: %w", opts.Sysfs, err))
	}
	boards := usbsys.Boards(tree)
	if len(boards) == 0 {
		fmt.Fprintf(ios.ErrOut, "hilrun: no USB serial consoles or debug probes under %s\n", opts.Sysfs)
		if opts.Write != "" {
			return infra(fmt.Errorf("nothing to write to %s: no board found", opts.Write))
		}
		return nil
	}
	if err := printBoards(ios.Out, boards); err != nil {
		return err
	}
	if opts.Write == "" {
		return nil
	}
	return writeBenchFile(ios, opts, boards)
}

// printBoards writes each board, its reason, then its consoles and probes.
func printBoards(w io.Writer, boards []usbsys.Board) error {
	for i, b := range boards {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s: %s\n", b.Name, b.Reason)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for j, c := range b.Consoles {
			fmt.Fprintf(tw, "  console\t%s\t/dev/%s\t%s\n", usbsys.ConsoleName(b, j), c.Name, consoleMatch(c))
		}
		for j, p := range b.Probes {
			fmt.Fprintf(tw, "  probe\t%s\t%s\t%s\n", usbsys.ProbeName(b, j), p.Kind, probeReach(p))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

func consoleMatch(c usbsys.TTY) string {
	d := c.Device
	if len(d.TTYs()) > 1 {
		return "port " + usbsys.ByID(c)
	}
	s := "usb " + d.ID()
	if d.Serial != "" {
		s += " serial " + d.Serial
	}
	return s
}

func probeReach(p usbsys.Probe) string {
	if p.Kind == usbsys.BlackMagic {
		if p.HasGDB {
			return "gdb " + usbsys.ByID(p.GDB)
		}
		return "gdb (no tty for its GDB server)"
	}
	s := "openocd " + p.Kind.OpenOCDInterface()
	if p.Device.Serial != "" {
		s += " serial " + p.Device.Serial
	}
	return s + " (add the target's config)"
}

// writeBenchFile writes the bench file of boards to opts.Write, which must
// not exist unless opts.Force.
func writeBenchFile(ios *IO, opts *DiscoverOptions, boards []usbsys.Board) error {
	var buf bytes.Buffer
	if err := usbsys.WriteBench(&buf, boards); err != nil {
		return infra(err)
	}
	flag := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if opts.Force {
		flag = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(opts.Write, flag, 0o666)
	if errors.Is(err, fs.ErrExist) {
		return invalid(fmt.Errorf("--write %s: the file exists; give --force to replace it", opts.Write))
	}
	if err != nil {
		return infra(fmt.Errorf("write the bench file: %w", err))
	}
	_, err = f.Write(buf.Bytes())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return infra(fmt.Errorf("write the bench file %s: %w", opts.Write, err))
	}
	consoles, probes := 0, 0
	for _, b := range boards {
		consoles += len(b.Consoles)
		probes += len(b.Probes)
	}
	fmt.Fprintf(ios.Out, "\nwrote %s: %s, %s, %s\n", opts.Write, count(len(boards), "board"), count(consoles, "device"), count(probes, "probe"))
	return nil
}
