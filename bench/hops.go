package bench

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hilrun/hilrun/pkg/sim"
)

// hopNames name the parts of a pair's error, in order; their sum is the
// signed error exactly: (arrival of b - arrival of a) - D.
var hopNames = []string{
	"write of a and the end of its step (the delay counts from the write)",
	"wake-up after the deadline (runner's clock)",
	"end of the delay step (event stream, bookkeeping)",
	"next step, to the write of b",
	"write of b, to the board's read",
	"minus: write of a, to the board's read",
}

// HopReport says where the error of the runner's delays comes from.
type HopReport struct {
	Hops []HopStat `json:"hops"`
	// Worst is how many of the largest |error| pairs WorstMean averages.
	Worst int `json:"worst"`
	// GCPairs counts pairs with a GC cycle completed between the sends;
	// GCMedian and NoGCMedian are the median |error| with and without.
	GCPairs    int           `json:"gc_pairs"`
	GCMedian   time.Duration `json:"gc_median_ns"`
	NoGCMedian time.Duration `json:"no_gc_median_ns"`
}

// HopStat is one hop over every pair.
type HopStat struct {
	Name      string        `json:"name"`
	Median    time.Duration `json:"median_ns"`
	P95       time.Duration `json:"p95_ns"`
	P99       time.Duration `json:"p99_ns"`
	WorstMean time.Duration `json:"worst_mean_ns"`
}

// addHops lines the child's hop times up with the board's receipt of each
// pair's lines.
func (s *DelaySeries) addHops(lines []sim.RxLine, hops [][]int64, warmup int, d time.Duration) error {
	arrive := map[string]time.Time{}
	for _, l := range lines {
		arrive[l.Line] = l.At
	}
	for k, h := range hops {
		if len(h) != hopCount {
			return fmt.Errorf("pair %d has %d hop times, want %d", k, len(h), hopCount)
		}
		i := strconv.Itoa(warmup + k)
		ta, oka := arrive["echo a"+i]
		tb, okb := arrive["echo b"+i]
		if !oka || !okb {
			return fmt.Errorf("the board did not receive pair %s", i)
		}
		ns := func(j int) time.Duration { return time.Duration(h[j]) }
		arrA, arrB := time.Duration(ta.UnixNano()), time.Duration(tb.UnixNano())
		p := []time.Duration{
			ns(hopDelayStart) - ns(hopSendA),
			ns(hopWake) - ns(hopDelayStart) - d,
			ns(hopDelayEnd) - ns(hopWake),
			ns(hopSendB) - ns(hopDelayEnd),
			arrB - ns(hopSendB),
			-(arrA - ns(hopSendA)),
			arrB - arrA - d,
		}
		s.pairs = append(s.pairs, p)
		s.gcPairs = append(s.gcPairs, h[hopGCB] != h[hopGCA])
	}
	return nil
}

func (s *DelaySeries) summarizeHops() {
	if len(s.pairs) == 0 {
		return
	}
	errIdx := len(hopNames)
	order := make([]int, len(s.pairs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(x, y int) int { return int(abs(s.pairs[y][errIdx]) - abs(s.pairs[x][errIdx])) })
	worst := max(1, len(s.pairs)/100)
	rep := &HopReport{Worst: worst}
	for j, name := range hopNames {
		var all []time.Duration
		for _, p := range s.pairs {
			all = append(all, p[j])
		}
		var sum time.Duration
		for _, i := range order[:worst] {
			sum += s.pairs[i][j]
		}
		sm := summarize(all)
		rep.Hops = append(rep.Hops, HopStat{Name: name, Median: sm.Median, P95: sm.P95, P99: sm.P99, WorstMean: sum / time.Duration(worst)})
	}
	var gc, nogc []time.Duration
	for i, p := range s.pairs {
		if s.gcPairs[i] {
			gc = append(gc, abs(p[errIdx]))
		} else {
			nogc = append(nogc, abs(p[errIdx]))
		}
	}
	rep.GCPairs, rep.GCMedian, rep.NoGCMedian = len(gc), summarize(gc).Median, summarize(nogc).Median
	s.Hops = rep
}

func (r *DelayReport) hopsMarkdown(b *strings.Builder) {
	for _, s := range r.Series {
		h := s.Hops
		if h == nil {
			continue
		}
		fmt.Fprintf(b, "\nWhere the error of %s's %s delays goes (-hops: wall-clock times the runner's events give, lined up with the board's; the rows add up to the signed error). Worst: the mean over the %d pair(s) of largest |error|.\n\n", s.Side, s.Delay, h.Worst)
		fmt.Fprintf(b, "| hop | median | p95 | p99 | worst |\n|---|--:|--:|--:|--:|\n")
		for _, x := range h.Hops {
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", x.Name, signedUS(x.Median), signedUS(x.P95), signedUS(x.P99), signedUS(x.WorstMean))
		}
		fmt.Fprintf(b, "\nPairs with a GC cycle between the two sends: %d of %d (median |error| %s with, %s without).\n", h.GCPairs, len(s.pairs), us(h.GCMedian), us(h.NoGCMedian))
	}
}
