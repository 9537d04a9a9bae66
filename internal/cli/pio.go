package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/hilrun/hilrun/pkg/gate/process"
	"github.com/hilrun/hilrun/pkg/pio"
)

// pioOptions are the flags the pio verbs share.
type pioOptions struct {
	JSON       bool
	ProjectDir string
	Env        string
	Port       string
	TestPort   string
	Filter     []string
	Ignore     []string
	Framework  string
	Page       int
	NoUpload   bool
	Verbose    bool
}

// pioVerb is one `hilrun pio` verb: it runs with a client and prints to
// ios, returning hilrun's error for the exit code.
type pioVerb struct {
	name, short, use string
	args             cobra.PositionalArgs
	flags            func(*cobra.Command, *pioOptions)
	run              func(ctx context.Context, c *pio.Client, ios *IO, o *pioOptions, args []string) error
}

func newPIOCmd(ios *IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pio VERB",
		Short: "PlatformIO verbs: boards, devices, projects, check, test, libraries",
		Long: `hilrun pio runs PlatformIO Core (pio) verbs with structured output, the same
verbs hilrun mcp serves, kebab-case here (the MCP tools' snake_case names,
such as list_boards, are accepted too): list-boards, get-board-info,
list-devices, init-project, get-project-config, clean-project,
upload-filesystem, check-project, run-tests, search-libraries,
install-library, list-installed-libraries, uninstall-library,
update-library, system-info.
Every project verb takes -d PROJECT and acts on that project only; global
settings, upgrades, account and remote commands are not offered.
Exit codes: 0 done, 1 defects found or tests failed, 2 invalid input (no
platformio.ini, unknown board or environment), 3 pio missing or failing.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			verbs := make([]string, 0, len(cmd.Commands()))
			for _, c := range cmd.Commands() {
				verbs = append(verbs, c.Name())
			}
			return invalid(fmt.Errorf("pio %s: not a verb hilrun offers (%s); global settings, upgrades, account and cloud commands and pio remote are left out on purpose", args[0], strings.Join(verbs, ", ")))
		},
	}
	for _, v := range pioVerbs() {
		o := &pioOptions{}
		v := v
		c := &cobra.Command{
			// Kebab-case as command lines have it; the MCP tool's
			// snake_case name stays an alias.
			Use:     strings.ReplaceAll(v.name, "_", "-") + v.use,
			Aliases: []string{v.name},
			Short:   v.short,
			Args:    v.args,
			RunE: func(cmd *cobra.Command, args []string) error {
				ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
				defer stop()
				c := &pio.Client{Runner: ios.PIO}
				if c.Runner == nil {
					c.Runner = pio.Exec{Runner: process.Runner{Policy: hostGates().Procs}}
				}
				if o.Verbose {
					c.Log = ios.ErrOut
				}
				return pioErr(v.run(ctx, c, ios, o, args))
			},
		}
		c.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
		c.Flags().BoolVarP(&o.Verbose, "verbose", "v", false, "stream PlatformIO's output to stderr as it runs")
		if v.flags != nil {
			v.flags(c, o)
		}
		wrapArgs(c)
		cmd.AddCommand(c)
	}
	return cmd
}

// pioErr gives a verb's error its exit code: invalid input 2, a missing or
// failing pio 3.
func pioErr(err error) error {
	var ee *exitError
	switch {
	case err == nil, errors.As(err, &ee):
		return err
	case errors.Is(err, pio.ErrInvalid):
		return invalid(err)
	case errors.Is(err, context.Canceled):
		return err
	}
	return infra(err)
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printOutput prints what a text verb did and fails when pio did.
func printOutput(ios *IO, o *pioOptions, out *pio.Output) error {
	if o.JSON {
		if err := printJSON(ios.Out, out); err != nil {
			return err
		}
	} else if !o.Verbose {
		fmt.Fprint(ios.Out, out.Text)
	}
	if !out.OK() {
		return infra(fmt.Errorf("pio %s: exit code %d: %s", strings.Join(out.Args[:min(2, len(out.Args))], " "), out.ExitCode, out.Summary()))
	}
	return nil
}

// pioDirFlag adds -d PROJECT, the project a verb acts on.
func pioDirFlag(c *cobra.Command, o *pioOptions) {
	c.Flags().StringVarP(&o.ProjectDir, "project-dir", "d", ".", "the PlatformIO project folder (holding platformio.ini)")
}

// pioEnvFlag adds -d PROJECT and -e ENV, the environment of the project a
// verb acts on.
func pioEnvFlag(c *cobra.Command, o *pioOptions) {
	pioDirFlag(c, o)
	c.Flags().StringVarP(&o.Env, "env", "e", "", "a platformio.ini environment; default: the project's default ones")
}

// pioInitFlags are init_project's flags.
func pioInitFlags(c *cobra.Command, o *pioOptions) {
	pioDirFlag(c, o)
	c.Flags().StringVar(&o.Framework, "framework", "", "the framework: arduino, espidf, zephyr...")
}

// pioUploadFilesystemFlags are upload_filesystem's flags.
func pioUploadFilesystemFlags(c *cobra.Command, o *pioOptions) {
	pioEnvFlag(c, o)
	c.Flags().StringVar(&o.Port, "port", "", "the upload port; default: PlatformIO's choice")
}

// pioRunTestsFlags are run_tests' flags.
func pioRunTestsFlags(c *cobra.Command, o *pioOptions) {
	pioEnvFlag(c, o)
	c.Flags().StringArrayVarP(&o.Filter, "filter", "f", nil, "only tests matching this pattern (repeatable)")
	c.Flags().StringArrayVarP(&o.Ignore, "ignore", "i", nil, "leave out tests matching this pattern (repeatable)")
	c.Flags().StringVar(&o.Port, "upload-port", "", "the upload port")
	c.Flags().StringVar(&o.TestPort, "test-port", "", "the port the results come from")
	c.Flags().BoolVar(&o.NoUpload, "without-uploading", false, "run the tests already on the board")
}

// pioPageFlag is search_libraries' --page.
func pioPageFlag(c *cobra.Command, o *pioOptions) {
	c.Flags().IntVar(&o.Page, "page", 0, "the page of results")
}

// pioVerbs is the table of the `hilrun pio` verbs, in the order help lists
// them.
func pioVerbs() []pioVerb {
	return []pioVerb{
		{name: "list_boards", use: " [FILTER]", short: "List boards (pio boards --json-output)", args: cobra.MaximumNArgs(1),
			run: pioListBoards},
		{name: "get_board_info", use: " BOARD_ID", short: "Show one board (pio boards --json-output)", args: cobra.ExactArgs(1),
			run: pioBoardInfo},
		{name: "list_devices", short: "List serial devices with their likely board (pio device list --json-output)", args: cobra.NoArgs,
			run: pioListDevices},
		{name: "init_project", use: " BOARD", short: "Create a project (pio project init -d DIR -b BOARD)", args: cobra.ExactArgs(1),
			flags: pioInitFlags, run: pioInitProject},
		{name: "get_project_config", short: "Show platformio.ini as PlatformIO reads it (pio project config --json-output)", args: cobra.NoArgs, flags: pioDirFlag,
			run: pioProjectConfig},
		{name: "clean_project", short: "Delete the build output (pio run -t clean)", args: cobra.NoArgs, flags: pioEnvFlag,
			run: pioCleanProject},
		{name: "upload_filesystem", short: "Build and upload the filesystem image (pio run -t uploadfs)", args: cobra.NoArgs,
			flags: pioUploadFilesystemFlags, run: pioUploadFilesystem},
		{name: "check_project", short: "Static analysis, defects as data (pio check --json-output); exit 1 on defects", args: cobra.NoArgs, flags: pioEnvFlag,
			run: pioCheckProject},
		{name: "run_tests", short: "Run the unit tests (pio test --json-output); exit 1 when one fails", args: cobra.NoArgs,
			flags: pioRunTestsFlags, run: pioRunTests},
		{name: "search_libraries", use: " QUERY", short: "Search the registry for libraries (pio pkg search)", args: cobra.MinimumNArgs(1),
			flags: pioPageFlag, run: pioSearchLibraries},
		libraryVerb("install_library", "Install a library into the project (pio pkg install -d DIR -l LIB)", pio.Install),
		{name: "list_installed_libraries", short: "List the project's libraries (pio pkg list --only-libraries)", args: cobra.NoArgs, flags: pioEnvFlag,
			run: pioListInstalledLibraries},
		libraryVerb("uninstall_library", "Uninstall a library from the project (pio pkg uninstall -d DIR -l LIB)", pio.Uninstall),
		libraryVerb("update_library", "Update a library of the project (pio pkg update -d DIR -l LIB)", pio.Update),
		{name: "system_info", short: "Show PlatformIO's version and folders (pio system info --json-output)", args: cobra.NoArgs,
			run: pioSystemInfo},
	}
}

// pioListBoards prints the boards whose data mention the filter (every board
// without one), as a table.
func pioListBoards(ctx context.Context, c *pio.Client, ios *IO, o *pioOptions, args []string) error {
	boards, err := c.ListBoards(ctx, strings.Join(args, ""))
	if err != nil {
		return err
	}
	if o.JSON {
		return printJSON(ios.Out, map[string]any{"boards": boards})
	}
	tw := tabwriter.NewWriter(ios.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tMCU\tMHZ\tFLASH\tRAM\tPLATFORM\tNAME")
	for _, b := range boards {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\n", b.ID, b.MCU, b.FCPU/1000000, b.ROM, b.RAM, b.Platform, b.Name)
	}
	return tw.Flush()
}

// pioBoardInfo prints one board, a field a line.
func pioBoardInfo(ctx context.Context, c *pio.Client, ios *IO, o *pioOptions, args []string) error {
	b, err := c.BoardInfo(ctx, args[0])
	if err != nil {
		return err
	}
	if o.JSON {
		return printJSON(ios.Out, b)
	}
	fmt.Fprintf(ios.Out, "id: %s\nname: %s\nplatform: %s\nmcu: %s\nclock: %d Hz\nflash: %d bytes\nram: %d bytes\nframeworks: %s\nvendor: %s\nurl: %s\n",
		b.ID, b.Name, b.Platform, b.MCU, b.FCPU, b.ROM, b.RAM, strings.Join(b.Frameworks, ", "), b.Vendor, b.URL)
	if len(b.DebugTools) > 0 {
		fmt.Fprintf(ios.Out, "debug tools: %s\n", strings.Join(b.DebugTools, ", "))
	}
	return nil
}

// pioListDevices prints the serial devices and the board each likely is.
func pioListDevices(ctx context.Context, c *pio.Client, ios *IO, o *pioOptions, args []string) error {
	devs, err := c.ListDevices(ctx)
	if err != nil {
		return err
	}
	if o.JSON {
		return printJSON(ios.Out, map[string]any{"devices": devs})
	}
	tw := tabwriter.NewWriter(ios.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PORT\tVID:PID\tSERIAL\tLIKELY BOARD\tDESCRIPTION")
	for _, d := range devs {
		id := "-"
		if d.VID != "" {
			id = d.VID + ":" + d.PID
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", d.Port, id, dash(d.Serial), dash(d.Board), d.Description)
	}
	return tw.Flush()
}

// pioInitProject creates a project for a board.
func pioInitProject(ctx context.Context, c *pio.Client, ios *IO, o *pioOptions, args []string) error {
	out, err := c.InitProject(ctx, pio.InitSpec{ProjectDir: o.ProjectDir, Board: args[0], Framework: o.Framework})
	if err != nil && out == nil {
		return err
	}
	return printOutput(ios, o, out)
}

// pioProjectConfig prints platformio.ini as PlatformIO reads it: in JSON each
// section's options by name.
func pioProjectConfig(ctx context.Context, c *pio.Client, ios *IO, o *pioOptions, args []string) error {
	cfg, err := c.GetProjectConfig(ctx, o.ProjectDir)
	if err != nil {
		return err
	}
	if o.JSON {
		secs := []map[string]any{}
		for _, s := range cfg.Sections {
			opts := map[string]any{}
			for _, op := range s.Options {
				opts[op.Name] = op.Value
			}
			secs = append(secs, map[string]any{"name": s.Name, "options": opts})
		}
		return printJSON(ios.Out, map[string]any{"envs": cfg.Envs(), "sections": secs})
	}
	for _, s := range cfg.Sections {
		fmt.Fprintf(ios.Out, "[%s]\n", s.Name)
		for _, op := range s.Options {
			fmt.Fprintf(ios.Out, "%s = %v\n", op.Name, op.Value)
		}
	}
	return nil
}

// pioCleanProject deletes the build output.
func pioCleanProject(ctx context.Context, c *pio.Client, ios *IO, o *pioOptions, args []string) error {
	out, err := c.RunTarget(ctx, o.ProjectDir, o.Env, "clean", "")
	if err != nil {
		return err
	}
	return printOutput(ios, o, out)
}

// pioUploadFilesystem builds and uploads the filesystem image; as text,
// PlatformIO's output is printed as it comes.
func pioUploadFilesystem(ctx context.Context, c *pio.Client, ios *IO, o *pioOptions, args []string) error {
	if !o.JSON {
		c.Progress = func(l string) { fmt.Fprintln(ios.Out, l) }
		o.Verbose = true
	}
	out, err := c.RunTarget(ctx, o.ProjectDir, o.Env, "uploadfs", o.Port)
	if err != nil {
		return err
	}
	return printOutput(ios, o, out)
}

// pioCheckProject prints the defects static analysis found, and fails with
// ExitFailed when there are any.
func pioCheckProject(ctx context.Context, c *pio.Client, ios *IO, o *pioOptions, args []string) error {
	runs, _, err := c.CheckProjectDefects(ctx, o.ProjectDir, o.Env)
	if err != nil {
		return err
	}
	n := 0
	for _, r := range runs {
		n += len(r.Defects)
	}
	if o.JSON {
		if err := printJSON(ios.Out, map[string]any{"check": runs}); err != nil {
			return err
		}
	} else {
		for _, r := range runs {
			for _, d := range r.Defects {
				fmt.Fprintf(ios.Out, "%s:%d:%d: %s: %s [%s]\n", d.File, d.Line, d.Column, d.Severity, d.Message, d.ID)
			}
			fmt.Fprintf(ios.Out, "%s %s: %d high, %d medium, %d low\n", r.Env, r.Tool, r.High, r.Medium, r.Low)
		}
	}
	if n > 0 {
		return silent(ExitFailed)
	}
	return nil
}

// pioRunTests prints the unit tests' outcomes, and fails with ExitFailed
// when one did not pass.
func pioRunTests(ctx context.Context, c *pio.Client, ios *IO, o *pioOptions, args []string) error {
	rep, _, err := c.Test(ctx, pio.TestSpec{ProjectDir: o.ProjectDir, Env: o.Env, Filter: o.Filter, Ignore: o.Ignore,
		UploadPort: o.Port, TestPort: o.TestPort, WithoutUploading: o.NoUpload})
	if err != nil {
		return err
	}
	if o.JSON {
		if err := printJSON(ios.Out, rep); err != nil {
			return err
		}
	} else {
		for _, s := range rep.Suites {
			for _, tc := range s.Cases {
				fmt.Fprintf(ios.Out, "%s:%s/%s %s", s.Env, s.Name, tc.Name, tc.Status)
				if tc.Message != "" {
					fmt.Fprintf(ios.Out, ": %s (%s:%d)", tc.Message, tc.File, tc.Line)
				}
				fmt.Fprintln(ios.Out)
			}
		}
		fmt.Fprintf(ios.Out, "%d test cases: %d failed, %d errored, %d skipped\n", rep.Cases, rep.Failures, rep.Errors, rep.Skipped)
	}
	if !rep.Passed() {
		return silent(ExitFailed)
	}
	return nil
}

// pioSearchLibraries prints a page of the registry's libraries matching the
// query.
func pioSearchLibraries(ctx context.Context, c *pio.Client, ios *IO, o *pioOptions, args []string) error {
	res, err := c.SearchLibraries(ctx, strings.Join(args, " "), o.Page)
	if err != nil {
		return err
	}
	if o.JSON {
		return printJSON(ios.Out, res)
	}
	fmt.Fprintf(ios.Out, "%d libraries (page %d of %d)\n", res.Total, res.Page, res.Pages)
	for _, l := range res.Libraries {
		fmt.Fprintf(ios.Out, "%s/%s@%s  %s\n", l.Owner, l.Name, l.Version, l.Description)
	}
	return nil
}

// pioListInstalledLibraries prints the project's libraries as a tree.
func pioListInstalledLibraries(ctx context.Context, c *pio.Client, ios *IO, o *pioOptions, args []string) error {
	libs, err := c.ListLibraries(ctx, o.ProjectDir, o.Env)
	if err != nil {
		return err
	}
	if o.JSON {
		return printJSON(ios.Out, map[string]any{"libraries": libs})
	}
	for _, l := range libs {
		fmt.Fprintf(ios.Out, "%s%s: %s@%s (required: %s)\n", strings.Repeat("  ", l.Depth), l.Env, l.Name, l.Version, l.Required)
	}
	return nil
}

// pioSystemInfo prints PlatformIO's version and folders.
func pioSystemInfo(ctx context.Context, c *pio.Client, ios *IO, o *pioOptions, args []string) error {
	items, err := c.SystemInfo(ctx)
	if err != nil {
		return err
	}
	if o.JSON {
		return printJSON(ios.Out, map[string]any{"items": items})
	}
	tw := tabwriter.NewWriter(ios.Out, 0, 4, 2, ' ', 0)
	for _, it := range items {
		fmt.Fprintf(tw, "%s\t%s\n", it.Title, it.Value)
	}
	return tw.Flush()
}

// libraryVerb is the verb that runs `pio pkg VERB` on one library of the
// project.
func libraryVerb(name, short string, verb pio.LibraryVerb) pioVerb {
	return pioVerb{name: name, use: " LIBRARY", short: short, args: cobra.ExactArgs(1), flags: pioEnvFlag,
		run: func(ctx context.Context, c *pio.Client, ios *IO, o *pioOptions, args []string) error {
			out, err := c.Library(ctx, verb, o.ProjectDir, o.Env, args[0])
			if err != nil {
				return err
			}
			return printOutput(ios, o, out)
		}}
}
