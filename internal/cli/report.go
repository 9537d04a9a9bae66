package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hilrun/hilrun/pkg/report"
	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/steps"
)

// runInfo says how this run was started, for the reports: the version,
// the command line and what each device, probe and camera is bound to.
func runInfo(seqs []*steps.Sequence) report.RunInfo {
	info := report.RunInfo{Version: Version(), Command: append([]string{"hilrun"}, os.Args[1:]...)}
	for _, seq := range seqs {
		for _, d := range seq.Devices {
			target := d.Port
			if d.USB != nil {
				target = fmt.Sprintf("usb %s:%s %s %s", d.USB.VID, d.USB.PID, d.USB.Serial, d.Port)
			}
			if d.Baud > 0 {
				target += fmt.Sprintf(" @ %d", d.Baud)
			}
			info.Bench = append(info.Bench, report.Binding{Sequence: seq.Name, Kind: "device", Name: d.Name, Target: strings.TrimSpace(target)})
		}
		for _, p := range seq.Probes {
			target := "openocd " + p.OpenOCD
			if p.Launch != nil {
				target = "openocd launched by hilrun"
			}
			info.Bench = append(info.Bench, report.Binding{Sequence: seq.Name, Kind: "probe", Name: p.Name, Target: target})
		}
		for _, c := range seq.Cameras {
			info.Bench = append(info.Bench, report.Binding{Sequence: seq.Name, Kind: "camera", Name: c.Name, Target: c.Input})
		}
	}
	return info
}

// checkVisualReports checks --html and --allure before the run (--html's
// path is checked with the other report files).
func checkVisualReports(opts *RunOptions) error {
	if opts.HTML == "-" {
		return errors.New("--html -: the page goes to a file, not to standard output (hilrun report html -o - prints one)")
	}
	return checkReportDir("--allure", opts.Allure)
}

// checkReportDir makes sure the folder of a report that is a folder
// (--allure) can be written, before the run.
func checkReportDir(flag, dir string) error {
	if dir == "" {
		return nil
	}
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return fmt.Errorf("%s %s: is a file, want a folder", flag, dir)
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return fmt.Errorf("%s %s: cannot write the results: %w", flag, dir, err)
	}
	f, err := os.CreateTemp(dir, ".hilrun-check-*")
	if err != nil {
		return fmt.Errorf("%s %s: cannot write the results: %w", flag, dir, err)
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// writeVisualReports writes the HTML report and the Allure results of
// opts, each on its own, and returns what was lost.
func writeVisualReports(ctx context.Context, opts *RunOptions, events string, sum results.Options) []string {
	var lost []string
	var consoleDir func(int) string
	if opts.consoleRoot != "" {
		consoleDir = func(seq int) string { return filepath.Join(opts.consoleRoot, strconv.Itoa(seq)) }
	}
	if opts.HTML != "" {
		if err := writeFile(ctx, opts.HTML, func(w io.Writer) error {
			return report.WriteHTML(w, events, report.HTMLOptions{Files: hostGates().Files, Summary: sum, Info: opts.info, ConsoleDir: consoleDir})
		}); err != nil {
			lost = append(lost, fmt.Sprintf("HTML report %s not written: %v", opts.HTML, err))
		}
	}
	if opts.Allure != "" {
		if err := report.WriteAllure(ctx, opts.Allure, events, report.AllureOptions{Files: hostGates().Files, Summary: sum, Info: opts.info, ConsoleDir: consoleDir}); err != nil {
			lost = append(lost, fmt.Sprintf("Allure results in %s not written: %v", opts.Allure, err))
		}
	}
	return lost
}

// ReportOptions are the inputs of hilrun report html.
type ReportOptions struct {
	// RunDir is a --log-dir folder, or an event file in one.
	RunDir string
	// Out is the file to write; "" means report.html in RunDir, "-"
	// standard output.
	Out         string
	MaxFailures int
}

func newReportCmd(ios *IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Make reports after the fact: from a run's log folder, or merged from the shards of a run",
	}
	opts := &ReportOptions{}
	html := &cobra.Command{
		Use:   "html [flags] RUN_DIR",
		Short: "Write the HTML report of a run from its log folder (--log-dir)",
		Long: `Write the same self-contained HTML page as hilrun run --html, from the
event file, console logs and pictures a run left in its --log-dir folder.
RUN_DIR is that folder (its latest run is used) or one of its
<stamp>-events.jsonl files. Exit codes: 0 written, 2 no run found there,
3 the report could not be written.`,
		Example: `  hilrun report html logs/                       # writes logs/<stamp>-report.html
  hilrun report html -o night.html logs/20261201T020000Z-events.jsonl`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.RunDir = args[0]
			return ReportHTML(cmd.Context(), ios, opts)
		},
	}
	html.Flags().StringVarP(&opts.Out, "output", "o", "", "write the page to `FILE` (- for standard output; default: <stamp>-report.html in the log folder)")
	html.Flags().IntVar(&opts.MaxFailures, "max-failures", results.DefaultMaxFailures, "list at most `N` failing iterations per repeat; the rest are counted")
	cmd.AddCommand(html, newReportMergeCmd(ios))
	return cmd
}

// ReportHTML writes the HTML report of the run in opts.RunDir.
func ReportHTML(ctx context.Context, ios *IO, opts *ReportOptions) error {
	events, err := findEvents(opts.RunDir)
	if err != nil {
		return invalid(err)
	}
	stamp := strings.TrimSuffix(filepath.Base(events), results.EventFile)
	hopts := report.HTMLOptions{Files: hostGates().Files, Summary: results.Options{MaxFailures: opts.MaxFailures}}
	if info, err := report.ReadRunInfo(hostGates().Files, filepath.Join(filepath.Dir(events), stamp+report.RunInfoFile)); err == nil {
		hopts.Info = info
	}
	out := opts.Out
	if out == "" {
		out = filepath.Join(filepath.Dir(events), stamp+"report.html")
	}
	if out == "-" {
		if err := report.WriteHTML(ctxWriter{ctx, ios.Out}, events, hopts); err != nil {
			return infra(err)
		}
		return nil
	}
	if err := writeFile(ctx, out, func(w io.Writer) error { return report.WriteHTML(w, events, hopts) }); err != nil {
		return infra(fmt.Errorf("write %s: %w", out, err))
	}
	fmt.Fprintln(ios.ErrOut, "hilrun: wrote "+out)
	return nil
}

// findEvents finds the event file of the latest run in dir, or returns dir
// when it is an event file.
func findEvents(dir string) (string, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return "", fmt.Errorf("read the run: %w", err)
	}
	if !fi.IsDir() {
		if !strings.HasSuffix(dir, results.EventFile) {
			return "", fmt.Errorf("%s: not an event file (*-%s) or a log folder", dir, results.EventFile)
		}
		return dir, nil
	}
	matches, err := filepath.Glob(filepath.Join(dir, "*"+results.EventFile))
	if err != nil {
		return "", err
	}
	if len(matches) == 0 {
		return "", fmt.Errorf("%s: no run here (no *-%s: was it hilrun run's --log-dir?)", dir, results.EventFile)
	}
	// The stamps sort by time.
	sort.Strings(matches)
	return matches[len(matches)-1], nil
}
