// Scenario (b): finding a pattern at the end of a long stream, speed and
// peak memory.

package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hilrun/hilrun/pkg/sim"
)

// SearchRun is one search of scenario (b).
type SearchRun struct {
	Done      bool         `json:"done"`
	Seconds   float64      `json:"seconds"`
	Bytes     int64        `json:"bytes"`
	MaxRSSKiB int64        `json:"max_rss_kib"`
	Progress  [][2]float64 `json:"progress,omitempty"`
}

// MBps is the run's speed in MB (10^6 bytes) per second.
func (r SearchRun) MBps() float64 { return ratio(float64(r.Bytes)/1e6, r.Seconds) }

// SearchCase is one way of searching in scenario (b).
type SearchCase struct {
	Name    string      `json:"name"`
	Side    string      `json:"side"`
	Size    int64       `json:"size"`
	Pattern string      `json:"pattern"`
	Command string      `json:"command"`
	Runs    []SearchRun `json:"runs"`
	// Peer names the pexpect case this one is compared with.
	Peer string `json:"peer,omitempty"`
	// Baseline names the case of this build that this one, run by the
	// baseline build (Options.Baseline), is compared with.
	Baseline string `json:"baseline,omitempty"`
	reps     int
	args     func(path string) (python bool, args []string)
}

// SearchReport is scenario (b).
type SearchReport struct {
	Cases []*SearchCase `json:"cases"`
}

// search runs scenario (b): each case on a fresh board, the repeated ones
// in rotating order round by round, then those that run once.
func (b *bencher) search(ctx context.Context) (*SearchReport, error) {
	o := b.opts
	cases := b.searchCases()
	rep := &SearchReport{Cases: cases}
	var repeated, once []*SearchCase
	for _, c := range cases {
		if c.reps > 1 {
			repeated = append(repeated, c)
		} else {
			once = append(once, c)
		}
	}
	for round := range o.SearchReps {
		for _, c := range rotate(repeated, round) {
			if err := b.runSearch(ctx, c, round, o.SearchReps); err != nil {
				return rep, fmt.Errorf("search: %w", err)
			}
		}
	}
	for _, c := range once {
		if err := b.runSearch(ctx, c, 0, 1); err != nil {
			return rep, fmt.Errorf("search: %w", err)
		}
	}
	return rep, nil
}

// searchCases lists the cases of (b), in the order the report shows them:
// the raw reads, hilrun's searches, pexpect's when there is a Python, and
// the baseline build's full-size hilrun run searches when there is one.
func (b *bencher) searchCases() []*SearchCase {
	o := b.opts
	big, small := o.SearchSize, o.SmallSize
	const (
		pyExact    = "pexpect expect_exact (literal)"
		pyRegex    = "pexpect expect (regex)"
		pyRegexBig = "pexpect expect (regex), full size"
	)
	cases := []*SearchCase{
		b.goSearch(rawCase, "raw", "literal", big, o.SearchReps, "", false),
	}
	if o.AA {
		cases = append(cases, b.goSearch(rawAgainCase, "raw", "literal", big, o.SearchReps, "", false))
	}
	cases = append(cases,
		b.goSearch("raw read, select then read per chunk, as go.bug.st/serial reads (diagnostic)", "raw-select", "literal", big, o.SearchReps, "", false),
		b.goSearch("hilrun run, literal expect", "runner", "literal", big, o.SearchReps, pyExact, false),
		b.goSearch("hilrun serialx Expect, literal", "console", "literal", big, o.SearchReps, pyExact, false),
		b.goSearch("hilrun serialx Expect, literal, logging", "console", "literal", big, o.SearchReps, pyExact, true),
		b.goSearch("hilrun run, literal expect, logging", "runner", "literal", big, o.SearchReps, pyExact, true),
		b.goSearch("hilrun run, regex expect", "runner", "regex", big, o.SearchReps, pyRegexBig, false),
		b.goSearch("hilrun run, regex expect, logging", "runner", "regex", big, o.SearchReps, pyRegexBig, true),
		b.goSearch("hilrun run, regex expect, small", "runner", "regex", small, o.SearchReps, pyRegex, false),
	)
	if o.Python != "" {
		cases = append(cases,
			b.pySearch(pyExact, "exact", big, o.SearchReps),
			b.pySearch(pyRegex, "regex", small, o.SearchReps),
			b.pySearch(pyRegexBig, "regex", big, 1))
	} else {
		for _, c := range cases {
			c.Peer = ""
		}
	}
	if o.Baseline != "" {
		// The same searches by the build before a change, in the same
		// rounds: an A/B test of the bulk expect.
		for _, c := range slices.Clone(cases) {
			if c.Side != sideRunner || c.Size != big {
				continue
			}
			base := *c
			base.Name, base.Side, base.Peer, base.Baseline = c.Name+", baseline build", sideBaseline, "", c.Name
			base.Command = strings.Replace(c.Command, "hilbench", "BASELINE", 1)
			cases = append(cases, &base)
		}
	}
	return cases
}

// searchLogDir is where the logging cases of (b) write their logs, removed
// after each run.
func (b *bencher) searchLogDir() string {
	return filepath.Join(b.opts.WorkDir, "search-logs")
}

// goSearch is a case of (b) that a hilbench child runs (its search mode):
// how is runner, console, raw or raw-select, match literal or regex. peer
// names the pexpect case it is compared with; logged has it log to
// searchLogDir.
func (b *bencher) goSearch(name, how, match string, size int64, reps int, peer string, logged bool) *SearchCase {
	limit := b.opts.Limit.String()
	side := sideRunner
	switch how {
	case "console":
		side = sideConsole
	case "raw", "raw-select":
		side = "raw read"
	}
	pattern := escapeLiteral(string(streamTail(size)))
	if match == "regex" {
		pattern = streamRegexp(size)
	}
	extra, extraCmd := []string{}, ""
	if logged {
		extra, extraCmd = []string{"-logdir", b.searchLogDir()}, " -logdir DIR"
	}
	return &SearchCase{
		Name: name, Side: side, Size: size, Pattern: pattern, Peer: peer, reps: reps,
		Command: fmt.Sprintf("HILBENCH_CHILD=1 hilbench search -serial PATH -how %s -match %s -size %d -timeout %s%s", how, match, size, limit, extraCmd),
		args: func(path string) (bool, []string) {
			return false, append([]string{"search", "-serial", path, "-how", how, "-match", match, "-size", strconv.FormatInt(size, 10), "-timeout", limit}, extra...)
		},
	}
}

// pySearch is a case of (b) that pexpect_search.py runs, mode exact or
// regex.
func (b *bencher) pySearch(name, mode string, size int64, reps int) *SearchCase {
	pattern := escapeLiteral(string(streamTail(size)))
	if mode == "regex" {
		pattern = streamRegexp(size)
	}
	secs := strconv.FormatFloat(b.opts.Limit.Seconds(), 'f', -1, 64)
	return &SearchCase{
		Name: name, Side: sidePexpect, Size: size, Pattern: pattern, reps: reps,
		Command: fmt.Sprintf("python3 bench/pexpect_search.py PATH %d %s '%s' %s", size, mode, pattern, secs),
		args: func(path string) (bool, []string) {
			return true, []string{"pexpect_search.py", path, strconv.FormatInt(size, 10), mode, pattern, secs}
		},
	}
}

// runSearch runs case c once on a fresh board, as round of rounds, and
// adds the run to c.Runs.
func (b *bencher) runSearch(ctx context.Context, c *SearchCase, round, rounds int) error {
	o := b.opts
	return b.withBoard(func(board *sim.Board) error {
		python, args := c.args(board.SerialPath())
		var (
			out childOutput
			rss int64
			err error
		)
		if c.Baseline != "" {
			out, rss, err = b.run(ctx, kindBaseline, args, o.Limit+2*time.Minute)
		} else {
			out, rss, err = b.side(ctx, python, args, o.Limit+2*time.Minute)
		}
		if err != nil {
			return err
		}
		os.RemoveAll(b.searchLogDir())
		r := SearchRun{Done: out.Done, Seconds: out.Seconds, Bytes: out.Bytes, MaxRSSKiB: rss, Progress: out.Progress}
		c.Runs = append(c.Runs, r)
		state := "found"
		if !r.Done {
			state = fmt.Sprintf("GAVE UP after %.0f s at %d of %d bytes", r.Seconds, r.Bytes, c.Size)
		}
		b.progress("b: round %d/%d %-42s %6.1f MB/s, %6.1f s, max RSS %s, %s", round+1, rounds, c.Name, r.MBps(), r.Seconds, mib(rss), state)
		return nil
	})
}

// rawCase is the case of (b) that reads with no matching: the ceiling.
const rawCase = "raw read, no matching (the pty's ceiling)"

// rawAgainCase is a second raw read in the same rounds (Options.AA): its
// ratio to the first is what noise alone makes of a ratio to the ceiling.
const rawAgainCase = "raw read again (A/A)"
