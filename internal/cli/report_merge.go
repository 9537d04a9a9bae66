package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hilrun/hilrun/pkg/report"
)

// ReportMergeOptions are the inputs of hilrun report merge.
type ReportMergeOptions struct {
	// Files are the reports of the shards, JSON and JUnit XML in any
	// order; each is told by its content.
	Files []string
	// JUnit and JSON are where the merged reports go; "-" is standard
	// output (one of them at most). HTML is where the page merged from
	// the JSON reports goes, a file.
	JUnit, JSON, HTML string
}

func newReportMergeCmd(ios *IO) *cobra.Command {
	opts := &ReportMergeOptions{}
	cmd := &cobra.Command{
		Use:   "merge [flags] REPORT...",
		Short: "Merge the JUnit, JSON and HTML reports of the shards of a run into one",
		Long: `Merge the reports of a run split with hilrun run --shard I/N into the
reports one run of every shard would have written. REPORT is a JSON report
(hilrun run --json) or a JUnit XML report (hilrun run --junit); each is told
by its content. --json writes the JSON reports merged, --junit the JUnit
ones: every sequence once, ordered by file, with the totals and the time
(the sum of the sequences' times) counted again, and no shard marks; each
test case keeps its measurements and the attempts of a retried one.
--html writes one HTML page from the JSON reports: every sequence with
its steps, attempts and measurements, and each measurement over the
whole run, a table per shard and a plot across the shards.

A shard's reports say which shard of which assignment they hold. Reports
of shards cut differently (other files, -k or --durations), one shard
given twice, or a sequence found in two reports are refused, naming them,
and nothing is written. When the shards' reports lack sequences (a shard's
report is missing, or a shard was cut short) the merged reports are
written, and merge says what is missing and exits 3.

Exit codes: 0 written (whatever the tests did: the shards' own exit codes
say that), 2 invalid input, 3 written but incomplete, or not written.`,
		Example: `  hilrun report merge --junit junit.xml --json report.json --html report.html shard-*/junit.xml shard-*/report.json
  hilrun report merge --json - shard-1.json shard-2.json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Files = args
			return ReportMerge(cmd.Context(), ios, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.JUnit, "junit", "", "write the merged JUnit XML report to `FILE` (- for standard output)")
	f.StringVar(&opts.JSON, "json", "", "write the merged JSON report to `FILE` (- for standard output)")
	f.StringVar(&opts.HTML, "html", "", "write one HTML report of the JSON reports to `FILE`")
	return cmd
}

// ReportMerge merges the reports in opts.Files.
func ReportMerge(ctx context.Context, ios *IO, opts *ReportMergeOptions) error {
	if opts.JUnit == "" && opts.JSON == "" && opts.HTML == "" {
		return invalid(errors.New("report merge: say what to write: --junit FILE, --json FILE, --html FILE or more than one"))
	}
	if opts.JUnit == "-" && opts.JSON == "-" {
		return invalid(errors.New("report merge: --junit - and --json - would mix two reports on standard output: give one a file"))
	}
	if opts.HTML == "-" {
		return invalid(errors.New("report merge: --html -: the page goes to a file, not to standard output"))
	}
	var jsons, junits []string
	for _, f := range opts.Files {
		kind, err := reportKind(f)
		if err != nil {
			return invalid(err)
		}
		if kind == "json" {
			jsons = append(jsons, f)
		} else {
			junits = append(junits, f)
		}
	}
	switch {
	case opts.JSON != "" && len(jsons) == 0:
		return invalid(errors.New("report merge: --json needs JSON reports (hilrun run --json) among the files; none is"))
	case opts.HTML != "" && len(jsons) == 0:
		return invalid(errors.New("report merge: --html needs JSON reports (hilrun run --json) among the files; none is"))
	case opts.JUnit != "" && len(junits) == 0:
		return invalid(errors.New("report merge: --junit needs JUnit reports (hilrun run --junit) among the files; none is"))
	case opts.JSON == "" && opts.HTML == "" && len(jsons) > 0:
		return invalid(fmt.Errorf("report merge: %s is a JSON report: pass --json FILE (or --html FILE) to merge the JSON reports", jsons[0]))
	case opts.JUnit == "" && len(junits) > 0:
		return invalid(fmt.Errorf("report merge: %s is a JUnit report: pass --junit FILE to merge the JUnit reports", junits[0]))
	}
	// Both merges check their inputs before writing; a JSON report and a
	// JUnit report of the same shards must hold the same sequences.
	type out struct {
		path  string
		merge func(io.Writer) error
	}
	var outs []out
	if opts.JSON != "" {
		outs = append(outs, out{opts.JSON, func(w io.Writer) error { return report.MergeJSON(w, hostGates().Files, jsons) }})
	}
	if opts.JUnit != "" {
		outs = append(outs, out{opts.JUnit, func(w io.Writer) error { return report.MergeJUnit(w, hostGates().Files, junits) }})
	}
	if opts.HTML != "" {
		info := report.RunInfo{Version: Version(), Command: append([]string{"hilrun"}, os.Args[1:]...)}
		outs = append(outs, out{opts.HTML, func(w io.Writer) error {
			return report.MergeHTML(w, hostGates().Files, jsons, report.HTMLOptions{Info: info})
		}})
	}
	// Everything is checked before anything is written: a merge into
	// io.Discard reads every input whole.
	var inc *report.IncompleteError
	for _, o := range outs {
		if err := o.merge(io.Discard); err != nil && !errors.As(err, &inc) {
			return mergeErr(err)
		}
	}
	if len(jsons) > 0 && len(junits) > 0 {
		if err := sameSequences(jsons, junits); err != nil {
			return invalid(err)
		}
	}
	var incomplete []string
	for _, o := range outs {
		var err error
		if o.path == "-" {
			err = o.merge(ctxWriter{ctx, ios.Out})
		} else {
			err = writeFile(ctx, o.path, func(w io.Writer) error {
				err := o.merge(w)
				if errors.As(err, &inc) {
					// Written whole, and said below.
					incomplete = append(incomplete, fmt.Sprintf("%s: %v", o.path, err))
					return nil
				}
				return err
			})
		}
		if errors.As(err, &inc) {
			incomplete = append(incomplete, fmt.Sprintf("%s: %v", o.path, err))
			err = nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return interrupted(err)
			}
			return mergeErr(fmt.Errorf("report merge: write %s: %w", o.path, err))
		}
	}
	if len(incomplete) > 0 {
		// The reports are written, so CI can show what ran, but they are
		// not the whole run.
		return infra(fmt.Errorf("report merge: written, but incomplete: %s", strings.Join(incomplete, "; ")))
	}
	return nil
}

func mergeErr(err error) error {
	if errors.Is(err, report.ErrNotReport) || errors.Is(err, report.ErrDuplicate) || errors.Is(err, report.ErrShards) || errors.Is(err, os.ErrNotExist) {
		return invalid(err)
	}
	return infra(err)
}

// reportKind tells a JSON report from a JUnit XML one by its first
// character that is not white space.
func reportKind(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("report merge: %w", err)
	}
	defer f.Close()
	r := bufio.NewReader(f)
	for {
		c, err := r.ReadByte()
		if err != nil {
			return "", fmt.Errorf("report merge: %s: %w: it is empty", path, report.ErrNotReport)
		}
		switch {
		case strings.ContainsRune(" \t\r\n\ufeff", rune(c)) || c == 0xef || c == 0xbb || c == 0xbf:
			continue
		case c == '{':
			return "json", nil
		case c == '<':
			return "junit", nil
		}
		return "", fmt.Errorf("report merge: %s: %w: want a JSON report (hilrun run --json) or a JUnit XML report (hilrun run --junit)", path, report.ErrNotReport)
	}
}

// sameSequences checks that the JSON and the JUnit reports hold the same
// sequences, so that the two merged reports tell the same story.
func sameSequences(jsons, junits []string) error {
	a, err := report.JSONSequences(hostGates().Files, jsons)
	if err != nil {
		return err
	}
	b, err := report.JUnitSequences(hostGates().Files, junits)
	if err != nil {
		return err
	}
	var onlyA, onlyB []string
	for k, name := range a {
		if _, ok := b[k]; !ok {
			onlyA = append(onlyA, name)
		}
	}
	for k, name := range b {
		if _, ok := a[k]; !ok {
			onlyB = append(onlyB, name)
		}
	}
	if len(onlyA)+len(onlyB) == 0 {
		return nil
	}
	var msg []string
	if len(onlyA) > 0 {
		msg = append(msg, "only the JSON reports hold "+strings.Join(slices.Sorted(slices.Values(onlyA)), ", "))
	}
	if len(onlyB) > 0 {
		msg = append(msg, "only the JUnit reports hold "+strings.Join(slices.Sorted(slices.Values(onlyB)), ", "))
	}
	return fmt.Errorf("report merge: the JSON and JUnit reports are not of the same runs: %s", strings.Join(msg, "; "))
}
