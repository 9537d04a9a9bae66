package report

import (
	"math"
	"slices"
	"strings"

	"github.com/hilrun/hilrun/pkg/results"
)

// repeatIteration returns the path of the innermost repeat a step at path
// is directly inside, or "" outside repeats: "4#2.1" gives "4".
func repeatIteration(path string) string {
	i := strings.LastIndexByte(path, '#')
	if i < 0 {
		return ""
	}
	return path[:i]
}

// jitterAgg measures the periods of a repeat: from the start of each
// iteration to the start of the next.
type jitterAgg struct {
	name      string
	period    float64 // every, in ms; 0 when not known
	maxLate   float64 // µs
	timed     bool
	iteration string // the path prefix of the current iteration
	start     results.Millis
	have      bool
	n         int
	exact     []float64 // ms
	hist      *fixedHist
	min, max  float64
}

func (j *jitterAgg) step(st *results.Step) {
	i := strings.LastIndexByte(st.Path, '#')
	rest := st.Path[i+1:]
	it := st.Path[:i+1] + rest[:strings.IndexByte(rest+".", '.')]
	if it == j.iteration {
		j.start = min(j.start, st.StartedMS)
		return
	}
	if j.have {
		j.period1(float64(st.StartedMS - j.start))
	}
	j.iteration, j.start, j.have = it, st.StartedMS, true
}

// period1 records one period. The start of an iteration is seen at its
// first step's end; the difference of starts is still its period.
func (j *jitterAgg) period1(p float64) {
	if j.n == 0 || p < j.min {
		j.min = p
	}
	if j.n == 0 || p > j.max {
		j.max = p
	}
	j.n++
	if j.hist == nil {
		j.exact = append(j.exact, p)
		if len(j.exact) > htmlJitterExact {
			j.hist = newFixedHist(j.exact, htmlJitterBins)
			j.exact = nil
		}
		return
	}
	j.hist.add(p)
}

// fixedHist is a histogram over a range chosen from the first values, with
// the values outside it counted at its ends.
type fixedHist struct {
	lo, width float64
	counts    []int
}

func newFixedHist(first []float64, bins int) *fixedHist {
	s := slices.Clone(first)
	slices.Sort(s)
	lo, hi := s[0], s[len(s)-1]
	span := hi - lo
	if span <= 0 {
		span = math.Max(math.Abs(lo)*0.01, 0.001)
	}
	lo -= span / 2
	hi += span / 2
	h := &fixedHist{lo: lo, width: (hi - lo) / float64(bins), counts: make([]int, bins)}
	for _, v := range first {
		h.add(v)
	}
	return h
}

func (h *fixedHist) add(v float64) {
	i := int((v - h.lo) / h.width)
	h.counts[min(max(i, 0), len(h.counts)-1)]++
}

// quantile is the nearest-rank q-quantile, to a bin's width.
func (h *fixedHist) quantile(q float64, n int) float64 {
	rank := max(int(math.Ceil(q*float64(n))), 1)
	seen := 0
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return h.lo + (float64(i)+0.5)*h.width
		}
	}
	return h.lo + float64(len(h.counts))*h.width
}

// jitterOut is a repeat's periods as the page shows them.
type jitterOut struct {
	Path     string  `json:"path"`
	Name     string  `json:"name"`
	PeriodMS float64 `json:"period_ms,omitempty"`
	// MaxLateUS is the runner's own measure: how late the latest
	// iteration started against its deadline.
	MaxLateUS *float64 `json:"max_late_us,omitempty"`
	N         int      `json:"n"`
	MinMS     float64  `json:"min_ms"`
	P50MS     float64  `json:"p50_ms"`
	P90MS     float64  `json:"p90_ms"`
	P99MS     float64  `json:"p99_ms"`
	MaxMS     float64  `json:"max_ms"`
	// Exact says the percentiles are exact; else they are to a bin.
	Exact bool `json:"exact"`
	// The histogram: Bins counts from LoMS, WidthMS wide each.
	LoMS    float64 `json:"lo_ms"`
	WidthMS float64 `json:"width_ms"`
	Bins    []int   `json:"bins"`
}

func (j *jitterAgg) out(path string) jitterOut {
	o := jitterOut{Path: path, Name: j.name, PeriodMS: j.period, N: j.n, MinMS: j.min, MaxMS: j.max}
	if j.timed {
		late := j.maxLate
		o.MaxLateUS = &late
	}
	h := j.hist
	if h == nil {
		o.Exact = true
		s := slices.Clone(j.exact)
		slices.Sort(s)
		q := func(q float64) float64 { return s[max(int(math.Ceil(q*float64(len(s)))), 1)-1] }
		o.P50MS, o.P90MS, o.P99MS = q(0.5), q(0.9), q(0.99)
		h = newFixedHist(j.exact, min(max(2*int(math.Sqrt(float64(len(s)))), 10), htmlJitterBins))
	} else {
		o.P50MS, o.P90MS, o.P99MS = h.quantile(0.5, j.n), h.quantile(0.9, j.n), h.quantile(0.99, j.n)
	}
	o.LoMS, o.WidthMS, o.Bins = h.lo, h.width, h.counts
	for _, f := range []*float64{&o.MinMS, &o.P50MS, &o.P90MS, &o.P99MS, &o.MaxMS, &o.LoMS} {
		*f = math.Round(*f*1000) / 1000
	}
	o.WidthMS = math.Round(o.WidthMS*1e6) / 1e6
	return o
}
