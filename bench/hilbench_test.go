package bench

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/sim"
	"github.com/hilrun/hilrun/pkg/testenv"
)

// TestMain lets the test binary act as the hilrun side of a benchmark,
// as hilbench does: Run re-executes it with ChildEnv set.
func TestMain(m *testing.M) {
	if os.Getenv(ChildEnv) != "" {
		os.Exit(ChildMain(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// tiny returns options that run every part of the harness in seconds.
// Nothing here measures anything worth reading.
func tiny(only ...string) Options {
	return Options{
		Only:        only,
		N:           30,
		Rounds:      2,
		Warmup:      3,
		SearchSize:  200_000,
		SmallSize:   20_000,
		SearchReps:  1,
		Limit:       30 * time.Second,
		DelayN:      2,
		StreamFor:   300 * time.Millisecond,
		StreamChunk: 100_000,
		MemN:        6,
		MemProcN:    2,
		MemRounds:   2,
		ToggleN:     4,
		ToggleEvery: 10 * time.Millisecond,
		ToggleReps:  1,
	}
}

// requirePexpect returns the interpreter the harness picks (FindPython).
// It skips the test when none can import pexpect, and fails it under
// CI=true, where python3-pexpect must be installed.
func requirePexpect(t *testing.T) string {
	t.Helper()
	py, err := FindPython(context.Background())
	if err == nil {
		return py
	}
	testenv.Missing(t, "pexpect is not installed (apt-get install python3-pexpect): %v", err)
	return ""
}

// requireOpenOCD skips the test when openocd is not installed, and fails
// it under CI=true, where it must be.
func requireOpenOCD(t *testing.T) {
	t.Helper()
	testenv.NeedTool(t, "openocd", "apt-get install openocd")
}

func TestLosslessLog(t *testing.T) {
	rep, err := Run(context.Background(), tiny(Lossless))
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Stream
	if s == nil {
		t.Fatal("no lossless report")
	}
	if s.Iterations < 1 || s.Sent == 0 {
		t.Fatalf("streamed %d replies, %d bytes; want at least one", s.Iterations, s.Sent)
	}
	if !s.Identical || s.Lost != 0 || s.Logged != s.Sent {
		t.Errorf("log: identical %v (%s), lost %d, logged %d of %d bytes", s.Identical, s.Problem, s.Lost, s.Logged, s.Sent)
	}
	if !strings.HasPrefix(s.Timeline, "ok") {
		t.Errorf("timeline: %s", s.Timeline)
	}
}

func TestScenariosWithPexpect(t *testing.T) {
	py := requirePexpect(t)
	opts := tiny(RoundTrip, Search, Delay)
	opts.Python = py
	opts.WaitVariants = true
	rep, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Env.Pexpect == "" {
		t.Error("the pexpect version was not recorded")
	}

	if rep.RTT == nil || len(rep.RTT.Sides) != 4 {
		t.Fatalf("round trips: %+v, want four sides (runner, runner with a regexp, serialx, pexpect)", rep.RTT)
	}
	for _, s := range rep.RTT.Sides {
		if s.Summary.N != opts.N || s.Summary.Median <= 0 {
			t.Errorf("round trips of %s: %+v, want %d positive samples", s.Side, s.Summary, opts.N)
		}
	}

	if rep.Search == nil {
		t.Fatal("no search report")
	}
	sides := map[string]bool{}
	for _, c := range rep.Search.Cases {
		sides[c.Side] = true
		if len(c.Runs) == 0 {
			t.Errorf("search %q did not run", c.Name)
		}
		for _, r := range c.Runs {
			if !r.Done || r.Bytes < c.Size || r.Seconds <= 0 {
				t.Errorf("search %q: %+v, want it done with %d bytes", c.Name, r, c.Size)
			}
		}
	}
	for _, side := range []string{sideRunner, sideConsole, sidePexpect} {
		if !sides[side] {
			t.Errorf("no search by %s", side)
		}
	}

	if want := 2 + len(waitVariants); rep.Delay == nil || len(rep.Delay.Series) != want*3 {
		t.Fatalf("delays: %+v, want %d sides (runner, pexpect, the waits) for three lengths", rep.Delay, want)
	}
	for _, s := range rep.Delay.Series {
		if s.Errors.N != opts.DelayN {
			t.Errorf("delay %s by %s: %d samples, want %d", s.Delay, s.Side, s.Errors.N, opts.DelayN)
		}
	}

	var md bytes.Buffer
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"### (a)", "### (b)", "### (c)", "| pexpect |", "pexpect_search.py"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, md.String())
		}
	}
}

func TestMemoryScenarios(t *testing.T) {
	requireOpenOCD(t)
	opts := tiny(MemRead, MemToggle)
	rep, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Env.OpenOCD == "" {
		t.Error("the OpenOCD version was not recorded")
	}

	if rep.Mem == nil || len(rep.Mem.Sides) != 5 {
		t.Fatalf("memory reads: %+v, want five sides", rep.Mem)
	}
	for _, s := range rep.Mem.Sides {
		want := opts.MemN
		if s.Side == sideProcess {
			want = opts.MemProcN
		}
		if s.Summary.N != want || s.Summary.Median <= 0 {
			t.Errorf("reads by %s: %+v, want %d positive samples", s.Side, s.Summary, want)
		}
	}
	if rep.Mem.Launch.N == 0 {
		t.Error("no OpenOCD launch was timed")
	}

	if rep.Toggle == nil || len(rep.Toggle.Sides) != 3 {
		t.Fatalf("LED toggle: %+v, want three sides", rep.Toggle)
	}
	for _, s := range rep.Toggle.Sides {
		if s.Period.N != opts.ToggleN || s.Period.Min <= 0 {
			t.Errorf("LED periods by %s: %+v, want %d positive periods", s.Side, s.Period, opts.ToggleN)
		}
		if s.Op.N != opts.ToggleN+1 {
			t.Errorf("LED writes timed by %s: %d, want %d", s.Side, s.Op.N, opts.ToggleN+1)
		}
	}

	var md bytes.Buffer
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"### (e)", "### (f)", "| " + sideProcess + " |", "| " + sideSession + " |", "mem-process"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, md.String())
		}
	}
}

func TestCheckCounter(t *testing.T) {
	tests := []struct {
		name    string
		vals    []uint64
		elapsed time.Duration
		wantErr bool
	}{
		{"counting", []uint64{counterSeed, counterSeed + 3, counterSeed + 3, counterSeed + 9}, 10 * time.Millisecond, false},
		{"below the seed", []uint64{counterSeed - 1}, time.Second, true},
		{"ahead of the clock", []uint64{counterSeed + 50}, 10 * time.Millisecond, true},
		{"going back", []uint64{counterSeed + 5, counterSeed + 4}, time.Second, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := checkCounter(tt.vals, tt.elapsed); (err != nil) != tt.wantErr {
				t.Errorf("checkCounter() = %v, want error %v", err, tt.wantErr)
			}
		})
	}
}

func TestLEDPeriods(t *testing.T) {
	t0 := time.Now()
	ev := func(ms int, addr, v uint32) sim.WriteEvent {
		return sim.WriteEvent{At: t0.Add(time.Duration(ms) * time.Millisecond), Addr: addr, Width: 32, Value: v}
	}
	good := []sim.WriteEvent{
		ev(0, sim.CounterAddr, 1), // not the LED
		ev(1, ledReg, ledSet), ev(11, ledReg, ledReset), ev(22, ledReg, ledSet),
	}
	got, err := ledPeriods(good, 2)
	if err != nil {
		t.Fatal(err)
	}
	if want := []time.Duration{10 * time.Millisecond, 11 * time.Millisecond}; !equalDurations(got, want) {
		t.Errorf("ledPeriods() = %v, want %v", got, want)
	}
	if _, err := ledPeriods(good, 3); err == nil {
		t.Error("a missing write went unnoticed")
	}
	bad := []sim.WriteEvent{ev(1, ledReg, ledSet), ev(11, ledReg, ledSet)}
	if _, err := ledPeriods(bad, 1); err == nil {
		t.Error("two set writes in a row went unnoticed")
	}
}

func TestStreamTail(t *testing.T) {
	tests := []struct {
		name string
		size int64
	}{
		{"whole last line", 64 * 10},
		{"partial last line", 64*10 + 30},
		{"number only", 64*10 + 5},
		{"one byte", 1},
		{"benchmark size", 25_000_000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reply := append(sim.StreamData(int(tt.size), "crlf"), "\r\n"+prompt...)
			tail := streamTail(tt.size)
			if !bytes.HasSuffix(reply, tail) {
				t.Fatalf("streamTail(%d) = %q, not the end of the reply", tt.size, tail)
			}
			if i := bytes.Index(reply, tail); i != len(reply)-len(tail) {
				t.Errorf("streamTail(%d) first matches at %d, want only at the end (%d)", tt.size, i, len(reply)-len(tail))
			}
			re := regexp.MustCompile(streamRegexp(tt.size))
			loc := re.FindIndex(reply)
			if loc == nil || loc[1] != len(reply) {
				t.Errorf("streamRegexp(%d) = %q matches at %v, want only at the end", tt.size, re, loc)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		var out []time.Duration
		for _, x := range v {
			out = append(out, time.Duration(x)*time.Millisecond)
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = 100 - i
	}
	tests := []struct {
		name    string
		samples []time.Duration
		want    Summary
	}{
		{"empty", nil, Summary{}},
		{"one", ms(7), Summary{N: 1, Min: 7 * time.Millisecond, Median: 7 * time.Millisecond, P95: 7 * time.Millisecond, P99: 7 * time.Millisecond, Max: 7 * time.Millisecond, Mean: 7 * time.Millisecond}},
		{"even count takes the lower median", ms(4, 1, 3, 2), Summary{N: 4, Min: time.Millisecond, Median: 2 * time.Millisecond, P95: 4 * time.Millisecond, P99: 4 * time.Millisecond, Max: 4 * time.Millisecond, Mean: 2500 * time.Microsecond}},
		{"p95 and p99 of 100 are the 95th and 99th", ms(hundred...), Summary{N: 100, Min: time.Millisecond, Median: 50 * time.Millisecond, P95: 95 * time.Millisecond, P99: 99 * time.Millisecond, Max: 100 * time.Millisecond, Mean: 50500 * time.Microsecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := summarize(tt.samples); got != tt.want {
				t.Errorf("summarize() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestPairGaps(t *testing.T) {
	t0 := time.Now()
	at := func(us int) time.Time { return t0.Add(time.Duration(us) * time.Microsecond) }
	lines := []sim.RxLine{
		{At: at(0), Line: "echo sync"},
		{At: at(10), Line: "echo a0"},
		{At: at(1020), Line: "echo b0"},
		{At: at(2000), Line: "echo a1"},
		{At: at(3005), Line: "echo b1"},
	}
	tests := []struct {
		name    string
		warmup  int
		n       int
		want    []time.Duration
		wantErr bool
	}{
		{"all", 0, 2, []time.Duration{1010 * time.Microsecond, 1005 * time.Microsecond}, false},
		{"after warm-up", 1, 1, []time.Duration{1005 * time.Microsecond}, false},
		{"missing pair", 1, 2, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := pairGaps(lines, tt.warmup, tt.n)
			if (err != nil) != tt.wantErr {
				t.Fatalf("pairGaps() error = %v, want error %v", err, tt.wantErr)
			}
			if !tt.wantErr && !equalDurations(got, tt.want) {
				t.Errorf("pairGaps() = %v, want %v", got, tt.want)
			}
		})
	}
}

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestVerifyLogFindsDamage(t *testing.T) {
	const chunk = 1000
	block := append(sim.StreamData(chunk, "crlf"), "\r\n"+prompt...)
	prefix := []byte("banner\r\nsim> sync\r\nsim> ")
	good := append(append(append([]byte{}, prefix...), block...), block...)
	cursors := []int64{int64(len(prefix)), int64(len(prefix) + len(block))}
	dropped := append(append([]byte{}, good[:len(good)-100]...), good[len(good)-99:]...)
	flipped := bytes.Clone(good)
	flipped[len(prefix)+500] ^= 1
	tests := []struct {
		name      string
		log       []byte
		identical bool
		lost      int64
	}{
		{"intact", good, true, 0},
		{"one byte dropped", dropped, false, 1},
		{"one byte changed", flipped, false, 0},
		{"truncated", good[:len(good)-10], false, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := t.TempDir() + "/console.log"
			if err := os.WriteFile(path, tt.log, 0o644); err != nil {
				t.Fatal(err)
			}
			rep := &StreamReport{Chunk: chunk}
			if err := verifyLog(rep, path, cursors); err != nil {
				t.Fatal(err)
			}
			if rep.Identical != tt.identical || rep.Lost != tt.lost {
				t.Errorf("identical %v, lost %d (%s); want %v, %d", rep.Identical, rep.Lost, rep.Problem, tt.identical, tt.lost)
			}
		})
	}
}

// TestPeersAndPeriods runs (a) and (c) with the Tcl expect and C client
// sides, and (l), at a tiny size, with the A/A sides (a second C client,
// a second raw read in (b)): every side must send what the board expects,
// and the report must carry their per-round ratios.
func TestPeersAndPeriods(t *testing.T) {
	testenv.NeedTool(t, "expect", "apt-get install expect")
	testenv.NeedTool(t, "cc", "apt-get install gcc")
	opts := tiny(RoundTrip, Search, Delay, Period)
	opts.Expect, opts.CC = "expect", "cc"
	opts.AA, opts.SearchReps = true, 2
	opts.GoLoop, opts.GoLoopPoller = true, true
	// This test binary is a hilbench child too (TestMain): the baseline
	// build of an A/B test.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	opts.Baseline = exe
	opts.Delays = []time.Duration{time.Millisecond}
	opts.PeriodN, opts.PeriodEvery = 6, 5*time.Millisecond
	rep, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, s := range rep.RTT.Sides {
		got["a "+s.Side] = s.Summary.N
	}
	for _, s := range rep.Delay.Series {
		got["c "+s.Side] = s.Errors.N
	}
	for _, s := range rep.Period.Sides {
		got["l "+s.Side] = s.Error.N
		if len(s.Rounds) != opts.Rounds {
			t.Errorf("(l) %s: %d rounds summarized, want %d", s.Side, len(s.Rounds), opts.Rounds)
		}
		// Every side keeps its own record of its writes.
		if s.Sender.N != opts.PeriodN {
			t.Errorf("(l) %s: %d periods by the sender's record, want %d", s.Side, s.Sender.N, opts.PeriodN)
		}
		if s.SenderTail > s.BoardTail {
			t.Errorf("(l) %s: %d of %d tail periods the sender's, more than there are", s.Side, s.SenderTail, s.BoardTail)
		}
	}
	for _, c := range rep.Search.Cases {
		got["b "+c.Name] = len(c.Runs)
	}
	want := map[string]int{
		"a " + sideExpect: opts.N, "a " + sideFloor: opts.N, "a " + sideFloorAgain: opts.N,
		"b " + rawCase: opts.SearchReps, "b " + rawAgainCase: opts.SearchReps,
		"c " + sideExpect: opts.DelayN, "c " + sideFloor: opts.DelayN, "c " + sideFloorAgain: opts.DelayN,
		"l " + sideRunner: opts.PeriodN, "l " + sideFloor: opts.PeriodN, "l " + sideFloorAgain: opts.PeriodN,
		"l " + sideGoLoop: opts.PeriodN, "l " + sideGoLoopPoller: opts.PeriodN, "l " + sideGoLoopInput: opts.PeriodN,
		"a " + sideBaseline: opts.N, "l " + sideBaseline: opts.PeriodN,
		"b hilrun run, regex expect, logging, baseline build": opts.SearchReps,
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%s: %d samples, want %d", k, got[k], n)
		}
	}
	var md bytes.Buffer
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"| " + sideExpect + " | ", "| " + sideFloor + " | ", "### (l)", "Per-round ratios", "| of them, the sender's own | write to board read: median |", "hilrun run period |error| by its own record",
		"Per-round ratios, " + sideGoLoopPoller + " period |error|", "Per-round ratios, " + sideGoLoopInput + " period |error|"} {
		if !strings.Contains(md.String(), s) {
			t.Errorf("the report has no %q", s)
		}
	}
	// hilrun's verdicts are given against the baseline build, in (a) and
	// in (l).
	if n := strings.Count(md.String(), "| "+sideBaseline+" | "); n < 4 {
		t.Errorf("the baseline build is in %d rows, want its sides and hilrun's verdicts against it in (a) and (l):\n%s", n, md.String())
	}
	// Each A/A verdict is against the first C client only: one table for
	// (a), one per delay length in (c), one for (l).
	aa := "Per-round ratios, " + sideFloorAgain
	if n := strings.Count(md.String(), aa); n != 3 {
		t.Errorf("the report has %d A/A verdict tables, want 3 ((a), (c) at 1ms, (l)):\n%s", n, md.String())
	}
	for _, part := range strings.Split(md.String(), aa)[1:] {
		_, table, _ := strings.Cut(part, "| peer |")
		table, _, _ = strings.Cut(table, "\n\n")
		if !strings.Contains(table, "| "+sideFloor+" | ") || strings.Contains(table, "| "+sideExpect+" | ") {
			t.Errorf("an A/A verdict table is not the C client against itself alone:\n%s", table)
		}
	}
	if !regexp.MustCompile(`\| ` + regexp.QuoteMeta(rawAgainCase) + ` \|[^\n]*\| \d+% \(`).MatchString(md.String()) {
		t.Errorf("(b) has no ratio of the second raw read to the first:\n%s", md.String())
	}
	if !strings.Contains(md.String(), "hilrun run, regex expect, logging against the baseline build, MB/s per round: ") {
		t.Errorf("(b) has no verdict against the baseline build:\n%s", md.String())
	}
	if !strings.Contains(md.String(), `"`+rawAgainCase+`" is an A/A test`) {
		t.Errorf("(b) does not say what its A/A row is:\n%s", md.String())
	}
}

// reachExcess measures each line's way from the sender's write to the
// board's read against the quickest of the round, whatever the offset
// between the two clocks.
func TestReachExcess(t *testing.T) {
	base := time.Unix(1000, 0)
	// The sender's clock starts 7 s before the board's; lines 1 and 3 took
	// 50 µs and 2 ms longer than lines 0 and 2.
	sent := []int64{7e9, 7e9 + 10e6, 7e9 + 20e6, 7e9 + 30e6}
	at := []time.Time{
		base.Add(100 * time.Microsecond),
		base.Add(10*time.Millisecond + 150*time.Microsecond),
		base.Add(20*time.Millisecond + 100*time.Microsecond),
		base.Add(30*time.Millisecond + 2100*time.Microsecond),
	}
	got := reachExcess(sent, at)
	want := []time.Duration{0, 50 * time.Microsecond, 0, 2 * time.Millisecond}
	if !slices.Equal(got, want) {
		t.Errorf("reachExcess = %v, want %v", got, want)
	}
}
