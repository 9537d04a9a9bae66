package results

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/runner"
)

// measured makes the records of a repeat at path "0" whose iteration i
// measures vbat = val(i) (failing above 3.6) and a text fw.
func measured(n int, val func(int) float64) []Step {
	lo, hi := 3.0, 3.6
	var out []Step
	for i := 0; i < n; i++ {
		v := val(i)
		st := runner.Passed
		if v < lo || v > hi {
			st = runner.Failed
		}
		out = append(out,
			Step{StepBase: StepBase{Path: fmt.Sprintf("0#%d.0", i), Kind: "measure", Status: st,
				Measurement: &runner.Measurement{Name: "vbat", Value: v, Unit: "V", Min: &lo, Max: &hi, Outcome: st}}},
			Step{StepBase: StepBase{Path: fmt.Sprintf("0#%d.1", i), Kind: "measure", Status: runner.Passed,
				Measurement: &runner.Measurement{Name: "fw", Value: "1.2", Equals: "1.2", Outcome: runner.Passed}}})
	}
	return append(out, Step{StepBase: StepBase{Path: "0", Kind: "repeat", Status: runner.Failed}})
}

// A repeat summarises each measurement by name: counts by outcome, and
// min, median, p99 and max over its numbers, exact for small runs.
func TestRepeatMeasurements(t *testing.T) {
	vals := []float64{3.3, 3.1, 3.7, 3.2, 3.4}
	got, _ := summarize(Options{}, measured(len(vals), func(i int) float64 { return vals[i] }))
	r := got[0].Repeat
	if len(r.Measurements) != 2 {
		t.Fatalf("measurements %+v, want vbat and fw", r.Measurements)
	}
	v := r.Measurements[0]
	if v.Name != "vbat" || v.Count != 5 || v.Passed != 4 || v.Failed != 1 || v.Numbers != 5 {
		t.Errorf("vbat counted %+v", v)
	}
	if *v.Min != 3.1 || *v.Median != 3.3 || *v.P99 != 3.7 || *v.Max != 3.7 || !v.QuantilesExact {
		t.Errorf("vbat min %v median %v p99 %v max %v exact %v", *v.Min, *v.Median, *v.P99, *v.Max, v.QuantilesExact)
	}
	if want := "vbat: 5 values, 1 outside [3, 3.6] V; min 3.1 V, median 3.3 V, p99 3.7 V, max 3.7 V"; v.Text() != want {
		t.Errorf("text %q, want %q", v.Text(), want)
	}
	fw := r.Measurements[1]
	if fw.Name != "fw" || fw.Count != 5 || fw.Numbers != 0 || fw.Min != nil || fw.Last != "1.2" {
		t.Errorf("fw %+v", fw)
	}
	if want := `fw: 5 values, all = "1.2"`; fw.Text() != want {
		t.Errorf("text %q, want %q", fw.Text(), want)
	}
}

// Past the values kept exactly, the quantiles stay within 1% of the
// exact ones, for values of either sign, in bounded memory.
func TestMeasureQuantilesBounded(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var v values
	var all []float64
	for i := 0; i < 200_000; i++ {
		x := rng.NormFloat64() * 100
		v.add(x)
		all = append(all, x)
	}
	if !v.spilled || len(v.buckets) > 5000 {
		t.Fatalf("spilled %v with %d buckets", v.spilled, len(v.buckets))
	}
	slices.Sort(all)
	for _, q := range []float64{0.01, 0.5, 0.99} {
		exact := all[int(math.Ceil(q*float64(len(all))))-1]
		got := v.quantile(q)
		if math.Abs(got-exact) > 0.01*math.Abs(exact)+1e-9 {
			t.Errorf("q%.2f = %v, exact %v", q, got, exact)
		}
	}
	if v.min != all[0] || v.max != all[len(all)-1] {
		t.Errorf("min %v max %v, want %v %v", v.min, v.max, all[0], all[len(all)-1])
	}
}

// A measurement read back from an event file has the types it was
// written with.
func TestMeasurementRoundTrip(t *testing.T) {
	lo := 3.0
	res := runner.SequenceResult{Name: "m", Status: runner.Passed, Steps: []runner.StepResult{
		{Path: "0", Kind: "measure", Status: runner.Passed, Measurement: &runner.Measurement{Name: "vbat", Value: 3.31, Unit: "V", Min: &lo, Outcome: runner.Passed}},
		{Path: "1", Kind: "measure", Status: runner.Passed, Measurement: &runner.Measurement{Name: "fw", Value: "1.2", Equals: 7.0, Outcome: runner.Passed}},
	}}
	path, err := WriteResults(t.TempDir(), []runner.SequenceResult{res})
	if err != nil {
		t.Fatal(err)
	}
	var got []*runner.Measurement
	err = Read(filepath.Clean(path), func(r *Record) error {
		if r.Step != nil {
			got = append(got, r.Step.Measurement)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Value != 3.31 || *got[0].Min != 3 || got[1].Value != "1.2" || got[1].Equals != 7.0 {
		t.Errorf("read back %+v %+v", got[0], got[1])
	}
	if !strings.Contains(fmt.Sprint(got[0].Outcome), "passed") {
		t.Errorf("outcome %q", got[0].Outcome)
	}
}
