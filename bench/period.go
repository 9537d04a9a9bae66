package bench

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hilrun/hilrun/pkg/sim"
	"github.com/hilrun/hilrun/pkg/steps"
)

// PeriodReport is scenario (l): a line sent on a fixed period, as the
// board received it.
type PeriodReport struct {
	Every  time.Duration   `json:"every_ns"`
	N      int             `json:"n"`
	Rounds int             `json:"rounds"`
	Sides  []*PeriodSeries `json:"sides"`
}

// PeriodSeries is one side of (l).
type PeriodSeries struct {
	Side    string `json:"side"`
	Command string `json:"command"`
	// Error is |period - Every| over every round's periods; Period the
	// periods themselves.
	Error  Summary `json:"abs_error"`
	Period Summary `json:"period"`
	// Rounds summarizes each round's error, in order.
	Rounds []Summary `json:"rounds"`
	// Sender is |period - Every| by the side's own record of its writes
	// (every side keeps one). BoardTail counts the periods the board saw
	// off by more than tailAt, and SenderTail those of them the sender's
	// own period was off by at least half as much: the tail that starts
	// in the sending process, not in the pty, the board or the machine
	// between them.
	Sender     Summary `json:"sender_abs_error"`
	BoardTail  int     `json:"board_tail"`
	SenderTail int     `json:"sender_tail"`
	// SenderRounds summarizes each round's Sender error, in order.
	SenderRounds []Summary `json:"sender_rounds,omitempty"`
	// Reach is how much later than its round's quickest the board read
	// each line after the sender's write returned: the time a line spends
	// between the two processes, less the part common to the round (the
	// two records' clocks start at different times).
	Reach  Summary `json:"write_to_board_excess"`
	reach  []time.Duration
	errs   []time.Duration
	sent   []time.Duration
	period []time.Duration
}

// tailAt is the period error from which (l) asks whether the sender's own
// record shows it too.
const tailAt = time.Millisecond

// periods runs scenario (l): hilrun's `repeat: {every: P}` of a send
// against the C client's loop of absolute sleeps and writes, in
// alternating rounds of fresh boards.
func (b *bencher) periods(ctx context.Context) (*PeriodReport, error) {
	o := b.opts
	rep := &PeriodReport{Every: o.PeriodEvery, N: o.PeriodN, Rounds: o.Rounds}
	sides := b.periodSides()
	for _, sd := range sides {
		rep.Sides = append(rep.Sides, sd.s)
	}
	for round, n := range split(o.PeriodN, o.Rounds) {
		for _, sd := range rotate(sides, round) {
			if err := b.periodRound(ctx, sd, round, n); err != nil {
				return rep, fmt.Errorf("periods: %w", err)
			}
		}
	}
	for _, s := range rep.Sides {
		s.Error, s.Period = summarize(s.errs), summarize(s.period)
		if len(s.sent) > 0 {
			s.Sender, s.Reach = summarize(s.sent), summarize(s.reach)
		}
	}
	return rep, nil
}

// periodSide is one side of (l): its series, the kind of process that
// runs it, and that process's arguments for n periods on the port at path.
type periodSide struct {
	s    *PeriodSeries
	kind string
	args func(path string, n int) []string
}

// periodSides lists the sides of (l) that the options ask for: the runner,
// then the diagnostic and comparison sides, then the C client.
func (b *bencher) periodSides() []periodSide {
	o := b.opts
	// hil is a side that a hilbench child runs in mode, with extra flags.
	hil := func(name, mode string, extra ...string) periodSide {
		flags := strings.Join(append([]string{""}, extra...), " ")
		return periodSide{
			s:    &PeriodSeries{Side: name, Command: fmt.Sprintf("HILBENCH_CHILD=1 hilbench %s -serial PATH -every %s -n N%s", mode, o.PeriodEvery, flags)},
			kind: kindHilrun,
			args: func(path string, n int) []string {
				return append([]string{mode, "-serial", path, "-every", o.PeriodEvery.String(), "-n", itoa(n + 1)}, extra...)
			},
		}
	}
	sides := []periodSide{hil(sideRunner, "every-runner")}
	if o.Realtime {
		sides = append(sides, hil(sideRunnerRT, "every-runner", "-realtime"))
	}
	if o.GoLoop {
		sides = append(sides, hil(sideGoLoop, "every-go"))
		if o.AA {
			sides = append(sides, hil(sideGoLoopAgain, "every-go"))
		}
	}
	if o.GoLoopPoller {
		sides = append(sides, hil(sideGoLoopPoller, "every-go", "-watch", "poller"), hil(sideGoLoopInput, "every-go", "-watch", "input"))
	}
	if o.Baseline != "" {
		base := hil(sideBaseline, "every-runner")
		base.kind = kindBaseline
		base.s.Command = strings.Replace(base.s.Command, "hilbench", "BASELINE", 1)
		sides = append(sides, base)
	}
	if b.floor != "" {
		us := strconv.FormatInt(o.PeriodEvery.Microseconds(), 10)
		floor := periodSide{
			s:    &PeriodSeries{Side: sideFloor, Command: "./floor every PATH " + us + " N"},
			kind: kindFloor,
			args: func(path string, n int) []string { return []string{"every", path, us, itoa(n + 1)} },
		}
		sides = append(sides, floor)
		if o.AA {
			again := *floor.s
			again.Side = sideFloorAgain
			floor.s = &again
			sides = append(sides, floor)
		}
	}
	return sides
}

// periodRound runs n periods of side sd on a fresh board, as round, and
// adds them to its series: the periods the board saw and, when the side
// kept one, its own record of its writes.
func (b *bencher) periodRound(ctx context.Context, sd periodSide, round, n int) error {
	o := b.opts
	return b.withDevice(ctx, func(board device) error {
		out, _, err := b.run(ctx, sd.kind, sd.args(board.SerialPath(), n), 10*time.Minute)
		if err != nil {
			return err
		}
		log, err := board.Log()
		if err != nil {
			return err
		}
		at, err := periodArrivals(log.Rx, n+1)
		if err != nil {
			return fmt.Errorf("%s: %w", sd.s.Side, err)
		}
		if len(out.SentNs) > 0 && len(out.SentNs) != n+1 {
			return fmt.Errorf("%s: recorded %d writes, want %d", sd.s.Side, len(out.SentNs), n+1)
		}
		sd.s.addSenderRecord(out.SentNs, at, o.PeriodEvery)
		var errs []time.Duration
		for i := 1; i < len(at); i++ {
			p := at[i].Sub(at[i-1])
			sd.s.period = append(sd.s.period, p)
			errs = append(errs, abs(p-o.PeriodEvery))
		}
		sd.s.errs = append(sd.s.errs, errs...)
		sum := summarize(errs)
		sd.s.Rounds = append(sd.s.Rounds, sum)
		b.progress("l: round %d/%d %-16s %4d periods of %s, |error| median %s, p99 %s", round+1, o.Rounds, sd.s.Side, n, o.PeriodEvery, us(sum.Median), us(sum.P99))
		return nil
	})
}

// addSenderRecord adds a round's record of the sender's writes (sentNs,
// when each returned; none when the side keeps no record) to s, with the
// board's arrivals at of the same lines: the sender's own period errors,
// the tail counts and the write-to-board excess.
func (s *PeriodSeries) addSenderRecord(sentNs []int64, at []time.Time, every time.Duration) {
	var sents []time.Duration
	for i := 1; i < len(sentNs); i++ {
		sent := abs(time.Duration(sentNs[i]-sentNs[i-1]) - every)
		sents = append(sents, sent)
		if board := abs(at[i].Sub(at[i-1]) - every); board > tailAt {
			s.BoardTail++
			if 2*sent >= board {
				s.SenderTail++
			}
		}
	}
	if len(sents) > 0 {
		s.sent = append(s.sent, sents...)
		s.SenderRounds = append(s.SenderRounds, summarize(sents))
		s.reach = append(s.reach, reachExcess(sentNs, at)...)
	}
}

// reachExcess returns, for each line, how much longer than the quickest
// line of the round it took from the sender's write returning (sent, in
// the sender's clock) to the board reading it (at).
func reachExcess(sent []int64, at []time.Time) []time.Duration {
	d := make([]time.Duration, len(sent))
	for i := range sent {
		// Both sides measured from their first line, on monotonic clocks.
		d[i] = at[i].Sub(at[0]) - time.Duration(sent[i]-sent[0])
	}
	least := slices.Min(d)
	for i := range d {
		d[i] -= least
	}
	return d
}

// periodArrivals returns when the board received "echo p0" .. "echo pN-1".
func periodArrivals(lines []sim.RxLine, n int) ([]time.Time, error) {
	at := make([]time.Time, n)
	seen := 0
	for _, l := range lines {
		if rest, ok := strings.CutPrefix(l.Line, "echo p"); ok {
			if i, err := strconv.Atoi(rest); err == nil && i < n && at[i].IsZero() {
				at[i] = l.At
				seen++
			}
		}
	}
	if seen != n {
		return nil, fmt.Errorf("the board received %d of the %d timed lines", seen, n)
	}
	return at, nil
}

// everyRunner sends "echo pI" on a fixed period, as a user writes it:
// `repeat: {count: n, every: P, as: i}` of a send, then waits for the
// board to answer a last line.
func everyRunner(ctx context.Context, port string, every time.Duration, n int) (childOutput, error) {
	src := fmt.Sprintf(`name: every
expect_timeout: 10s
steps:
%s  - repeat: {count: %d, every: %s, as: i}
    steps:
      - send: echo p${i}
  - send: echo end
    expect: %s
`, syncSteps, n, every, quoteYAML("end\r\n"+prompt))
	res, err := runSequence(ctx, src, port, "")
	if err != nil {
		return childOutput{}, err
	}
	sends := stepsOf(res, steps.KindSend)
	if got := len(sends); got != n+2 {
		return childOutput{}, fmt.Errorf("ran %d send steps, want %d", got, n+2)
	}
	// The runner's own record: when each timed send's write returned.
	var out childOutput
	for _, s := range sends[1 : n+1] {
		out.SentNs = append(out.SentNs, int64(s.Started+s.Duration))
	}
	return out, nil
}

func (r *PeriodReport) markdown(b *strings.Builder) {
	fmt.Fprintf(b, "### (l) a line sent every %s, as the board saw it\n\n", r.Every)
	fmt.Fprintf(b, "%d periods per side in %d alternating rounds, each a fresh board and process. \"%s\" is a sequence: `repeat: {count: N, every: %s, as: i}` of `send: echo p${i}`. \"%s\" sleeps with clock_nanosleep(TIMER_ABSTIME) to each deadline t0 + i*P and writes the line. The period is the time between the board's receipt of consecutive lines; error = |period - %s|.\n\n", r.N, r.Rounds, sideRunner, r.Every, sideFloor, r.Every)
	fmt.Fprintf(b, "| side | periods | mean period | median error | p99 | max | p99 of each round |\n")
	fmt.Fprintf(b, "|---|--:|--:|--:|--:|--:|---|\n")
	rounds := map[string][]Summary{}
	for _, s := range r.Sides {
		var p99s []string
		for _, x := range s.Rounds {
			p99s = append(p99s, us(x.P99))
		}
		rounds[s.Side] = s.Rounds
		fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %s | %s |\n", s.Side, s.Error.N, ms(s.Period.Mean), us(s.Error.Median), us(s.Error.P99), us(s.Error.Max), strings.Join(p99s, ", "))
	}
	var own []*PeriodSeries
	for _, s := range r.Sides {
		if s.Sender.N > 0 {
			own = append(own, s)
		}
	}
	if len(own) > 0 {
		fmt.Fprintf(b, "\nThe same periods by the sender's own record (when each write returned), and whether the board's tail starts in the sender: of the periods the board saw off by more than %s, how many the sender's own period was off by at least half as much. \"Write to board read\" is how much later than the quickest line of its round the board read a line after the sender's write returned.\n\n", tailAt)
		fmt.Fprintf(b, "| side | sender's median error | p99 | max | board's periods off by more than %s | of them, the sender's own | write to board read: median | p99 |\n", tailAt)
		fmt.Fprintf(b, "|---|--:|--:|--:|--:|--:|--:|--:|\n")
		senderRounds := map[string][]Summary{}
		for _, s := range own {
			fmt.Fprintf(b, "| %s | %s | %s | %s | %d | %d | +%s | +%s |\n", s.Side, us(s.Sender.Median), us(s.Sender.P99), us(s.Sender.Max), s.BoardTail, s.SenderTail, us(s.Reach.Median), us(s.Reach.P99))
			senderRounds[s.Side] = s.SenderRounds
		}
		// The sender's own record leaves out the pty and the board: how
		// the sending processes compare with the instrument taken away.
		roundVerdicts(b, "period |error| by its own record", sideRunner, senderRounds)
		roundVerdicts(b, "period |error| by its own record", sideRunnerRT, senderRounds)
	}
	roundVerdicts(b, "period |error|", sideRunner, rounds)
	roundVerdicts(b, "period |error|", sideRunnerRT, rounds)
	roundVerdicts(b, "period |error|", sideGoLoop, rounds)
	roundVerdicts(b, "period |error|", sideGoLoopPoller, rounds)
	roundVerdicts(b, "period |error|", sideGoLoopInput, rounds)
	roundVerdicts(b, "period |error|", sideGoLoopAgain, rounds)
	roundVerdicts(b, "period |error|", sideFloorAgain, rounds)
	fmt.Fprintf(b, "\nOne round of each side:\n\n")
	for _, s := range r.Sides {
		fmt.Fprintf(b, "    %s\n", s.Command)
	}
	b.WriteString("\n")
}
