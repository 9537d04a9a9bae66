package bench

import (
	"math"
	"slices"
	"time"
)

// Summary describes a set of durations.
type Summary struct {
	N      int           `json:"n"`
	Min    time.Duration `json:"min_ns"`
	Median time.Duration `json:"median_ns"`
	P95    time.Duration `json:"p95_ns"`
	P99    time.Duration `json:"p99_ns"`
	Max    time.Duration `json:"max_ns"`
	Mean   time.Duration `json:"mean_ns"`
}

// summarize returns the order statistics of samples. Percentiles use the
// nearest-rank method: p99 is the smallest sample that at least 99% of the
// samples do not exceed. An empty slice gives the zero Summary.
func summarize(samples []time.Duration) Summary {
	if len(samples) == 0 {
		return Summary{}
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	var sum float64
	for _, d := range s {
		sum += float64(d)
	}
	return Summary{
		N:      len(s),
		Min:    s[0],
		Median: rank(s, 0.50),
		P95:    rank(s, 0.95),
		P99:    rank(s, 0.99),
		Max:    s[len(s)-1],
		Mean:   time.Duration(sum / float64(len(s))),
	}
}

// rank returns the nearest-rank q-quantile of sorted s.
func rank(s []time.Duration, q float64) time.Duration {
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

// abs returns |d|.
func abs(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// ratio returns a/b, or NaN when b is 0.
func ratio(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return a / b
}

// rotate returns s rotated left by k, so that alternating rounds start with
// a different side and machine noise hits each side in turn.
func rotate[T any](s []T, k int) []T {
	if len(s) == 0 {
		return nil
	}
	k %= len(s)
	return append(slices.Clone(s[k:]), s[:k]...)
}

// split divides n into parts nearly equal shares, the larger ones first.
func split(n, parts int) []int {
	out := make([]int, parts)
	for i := range out {
		out[i] = n / parts
		if i < n%parts {
			out[i]++
		}
	}
	return out
}

// Summarize is summarize for the benchmark commands under bench/cmd.
func Summarize(samples []time.Duration) Summary { return summarize(samples) }

// roundRatios returns, for each alternating round both sides ran, the
// ratio of pick of a's round to pick of b's.
func roundRatios(a, b []Summary, pick func(Summary) time.Duration) []float64 {
	out := make([]float64, 0, min(len(a), len(b)))
	for i := range min(len(a), len(b)) {
		out = append(out, ratio(float64(pick(a[i])), float64(pick(b[i]))))
	}
	return out
}

// MedianRatio returns the median over i of a[i]/b[i]: the verdict of
// rounds that each ran both sides of a ratio, as bench/cmd's commands and
// TclRPCBench give it. It is NaN when there are no rounds; a ratio to 0 is
// NaN.
func MedianRatio(a, b []time.Duration) float64 {
	r := make([]float64, len(a))
	for i := range a {
		r[i] = ratio(float64(a[i]), float64(b[i]))
	}
	return medianFloat(r)
}

// medianFloat returns the median of v (the mean of the middle two for an
// even count), or NaN for none.
func medianFloat(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func pickMedian(s Summary) time.Duration { return s.Median }
func pickP95(s Summary) time.Duration    { return s.P95 }
func pickP99(s Summary) time.Duration    { return s.P99 }
