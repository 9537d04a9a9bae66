package results

import (
	"math"
	"slices"
	"time"
)

// exactLimit is how many values a sketch keeps as they are: up to it,
// the median and p99 are exact.
const exactLimit = 1024

// gamma is the ratio between the bounds of a histogram bucket. A bucket's
// representative, its geometric middle, is within sqrt(gamma)-1 (under 1%)
// of any value in it.
const gamma = 1.02

var logGamma = math.Log(gamma)

// durations are a sketch of iteration times; values one of a
// measurement's numbers.
type (
	durations = sketch[time.Duration]
	values    = sketch[float64]
)

// sketch estimates quantiles of numbers of any sign in bounded memory:
// the first exactLimit values as they are, then a histogram of
// logarithmic buckets of each sign (and one for 0 and magnitudes under
// 1e-12): about 116 per decade, so about 1,500 between 1 ns and 1 hour
// however many values. Min and max are exact; a quantile is the
// nearest-rank value, exact up to exactLimit values and within 1%
// relative error beyond.
type sketch[T time.Duration | float64] struct {
	n        int
	min, max T
	exact    []T
	buckets  map[int]int
	spilled  bool
}

func (s *sketch[T]) add(x T) {
	if s.n == 0 || x < s.min {
		s.min = x
	}
	if s.n == 0 || x > s.max {
		s.max = x
	}
	s.n++
	if !s.spilled {
		s.exact = append(s.exact, x)
		if len(s.exact) <= exactLimit {
			return
		}
		s.spilled = true
		s.buckets = map[int]int{}
		for _, e := range s.exact {
			s.buckets[valueBucket(float64(e))]++
		}
		s.exact = nil
		return
	}
	s.buckets[valueBucket(float64(x))]++
}

// quantile is the nearest-rank q-quantile.
func (s *sketch[T]) quantile(q float64) T {
	if s.n == 0 {
		return 0
	}
	rank := max(int(math.Ceil(q*float64(s.n))), 1)
	if !s.spilled {
		e := slices.Clone(s.exact)
		slices.Sort(e)
		return e[rank-1]
	}
	keys := make([]int, 0, len(s.buckets))
	for k := range s.buckets {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	seen := 0
	for _, k := range keys {
		seen += s.buckets[k]
		if seen >= rank {
			return min(max(T(bucketValue(k)), s.min), s.max)
		}
	}
	return s.max
}

// valueBucket orders values: negative buckets below 0 (the bucket of 0
// and of magnitudes under 1e-12), positive above; bucket k > 0 holds
// values of about gamma^(k-bucketZero).
func valueBucket(x float64) int {
	a := math.Abs(x)
	if a < 1e-12 {
		return 0
	}
	k := max(int(math.Floor(math.Log(a)/logGamma))+bucketZero, 1)
	if x < 0 {
		return -k
	}
	return k
}

// bucketZero shifts bucket indices so that magnitudes from 1e-12 up get
// an index above 0.
var bucketZero = int(math.Ceil(-math.Log(1e-12)/logGamma)) + 1

// bucketValue is the representative of bucket k: its geometric middle.
func bucketValue(k int) float64 {
	if k == 0 {
		return 0
	}
	a := math.Exp((float64(max(k, -k)-bucketZero) + 0.5) * logGamma)
	if k < 0 {
		return -a
	}
	return a
}
