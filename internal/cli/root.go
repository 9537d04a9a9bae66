// Package cli holds hilrun's commands. Each cobra command fills an options
// struct and calls a plain function that does the work.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hilrun/hilrun/pkg/pio"
	"github.com/hilrun/hilrun/pkg/proc/tmpdir"
	"github.com/hilrun/hilrun/pkg/steps"
)

// version is set at build time with -ldflags "-X github.com/hilrun/hilrun/internal/cli.version=v1.2.3".
var version = ""

// Version is hilrun's version: the one set at build time, else the module
// version Go recorded, else "dev".
func Version() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// IO is where commands read and write.
type IO struct {
	In          io.Reader
	Out, ErrOut io.Writer
	// PIO runs PlatformIO for hilrun pio; nil runs the pio on PATH, with
	// the user's environment.
	PIO pio.Runner
}

// Main runs hilrun with args and returns the process exit code.
func Main(args []string, in io.Reader, out, errOut io.Writer) int {
	return MainIO(args, &IO{In: in, Out: out, ErrOut: errOut})
}

// MainIO is Main with its streams and seams in ios.
func MainIO(args []string, ios *IO) int {
	ignoreBrokenPipes()
	errOut := ios.ErrOut
	root := NewRoot(ios)
	root.SetArgs(args)
	err := boolFlagValue(root, args)
	if err == nil {
		err = root.ExecuteContext(context.Background())
	}
	if err == nil {
		return ExitPassed
	}
	var ee *exitError
	var el steps.ErrorList
	switch {
	case errors.As(err, &el):
		// One FILE:LINE:COL: message per line, as compilers print them,
		// so editors and CI annotate the lines.
		fmt.Fprintln(errOut, el.Error())
	case !errors.As(err, &ee) || ee.err != nil:
		fmt.Fprintf(errOut, "hilrun: %v\n", err)
	}
	return exitCode(err)
}

// NewRoot builds the hilrun command tree.
func NewRoot(ios *IO) *cobra.Command {
	root := &cobra.Command{
		Use:   "hilrun",
		Short: "Run declarative hardware-in-the-loop test sequences",
		Long: `hilrun runs sequence files (YAML or JSON) of steps against serial consoles
with measured timing: send, expect, delay, capture, assert. It serves CI
(hilrun run --junit), AI agents and people at the bench with one engine.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       Version(),
		// A hilrun that was killed could not remove its temporary
		// folders: the next one does.
		PersistentPreRun: func(*cobra.Command, []string) { tmpdir.Sweep() },
	}
	root.SetIn(ios.In)
	root.SetOut(ios.Out)
	root.SetErr(ios.ErrOut)
	// The version is --version (or hilrun version) only: -v is --verbose,
	// as in hilrun run -v, not the version at the top and verbose below.
	root.Flags().Bool("version", false, "print hilrun's version")
	root.SetVersionTemplate("hilrun {{.Version}}\n")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		if c == root && strings.Contains(err.Error(), "'v' in -v") {
			return invalid(fmt.Errorf("%w: -v is --verbose, as in hilrun run -v; the version is hilrun --version or hilrun version", err))
		}
		return invalid(fmt.Errorf("%w (see %s --help)", err, c.CommandPath()))
	})
	root.AddCommand(
		newRunCmd(ios),
		newValidateCmd(ios),
		newSchemaCmd(ios),
		newPortsCmd(ios),
		newSimCmd(ios),
		newMCPCmd(ios),
		newPIOCmd(ios),
		newReplCmd(ios),
		newVersionCmd(ios),
		newReportCmd(ios),
		newBenchCmd(ios),
	)
	for _, c := range root.Commands() {
		wrapArgs(c)
	}
	return root
}

// wrapArgs makes argument-count errors usage errors (exit 2).
func wrapArgs(c *cobra.Command) {
	if c.Args == nil {
		return
	}
	check := c.Args
	c.Args = func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return invalid(fmt.Errorf("%s: %w", cmd.CommandPath(), err))
		}
		return nil
	}
}

func newVersionCmd(ios *IO) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print hilrun's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			fmt.Fprintf(ios.Out, "hilrun %s\n", Version())
			return nil
		},
	}
}
