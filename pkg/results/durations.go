package results

import (
	"math"
	"slices"
	"time"
)

// exactLimit is how many iteration durations are kept as they are: up to
// it, the median and p99 are exact.
const exactLimit = 1024

// gamma is the ratio between the bounds of a histogram bucket. A bucket's
// representative, its geometric middle, is within sqrt(gamma)-1 (under 1%)
// of any duration in it.
const gamma = 1.02

var logGamma = math.Log(gamma)

// durations estimates quantiles in bounded memory: the first exactLimit
// durations as they are, then a histogram of logarithmic buckets (at most
// about 1,500 between 1 ns and 1 hour, however many durations). Min and
// max are always exact; a quantile is the nearest-rank value, exact below
// exactLimit durations and within 1% relative error above.
type durations struct {
	n        int
	min, max time.Duration
	exact    []time.Duration
	buckets  map[int]int
	spilled  bool
}

func (d *durations) add(x time.Duration) {
	if d.n == 0 || x < d.min {
		d.min = x
	}
	if d.n == 0 || x > d.max {
		d.max = x
	}
	d.n++
	if !d.spilled {
		d.exact = append(d.exact, x)
		if len(d.exact) <= exactLimit {
			return
		}
		d.spilled = true
		d.buckets = map[int]int{}
		for _, e := range d.exact {
			d.buckets[bucket(e)]++
		}
		d.exact = nil
		return
	}
	d.buckets[bucket(x)]++
}

func bucket(x time.Duration) int {
	if x <= 1 {
		return 0
	}
	return int(math.Log(float64(x)) / logGamma)
}

// quantile is the nearest-rank q-quantile.
func (d *durations) quantile(q float64) time.Duration {
	if d.n == 0 {
		return 0
	}
	rank := max(int(math.Ceil(q*float64(d.n))), 1)
	if !d.spilled {
		s := slices.Clone(d.exact)
		slices.Sort(s)
		return s[rank-1]
	}
	keys := make([]int, 0, len(d.buckets))
	for k := range d.buckets {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	seen := 0
	for _, k := range keys {
		seen += d.buckets[k]
		if seen >= rank {
			v := time.Duration(math.Exp((float64(k) + 0.5) * logGamma))
			if k == 0 {
				v = 0
			}
			return min(max(v, d.min), d.max)
		}
	}
	return d.max
}
