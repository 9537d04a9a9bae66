package results

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/runner"
)

// iterations makes the records of a repeat at path "0" of n iterations of
// two steps each, the second failing when fail(i), followed by the repeat's
// own record.
func iterations(n int, fail func(int) bool, dur func(int) time.Duration) []Step {
	var out []Step
	at := time.Duration(0)
	worst := runner.Passed
	for i := 0; i < n; i++ {
		d := dur(i)
		st := runner.Passed
		if fail(i) {
			st, worst = runner.Failed, runner.Failed
		}
		out = append(out,
			Step{StepBase: StepBase{Path: fmt.Sprintf("0#%d.0", i), Kind: "send", Status: runner.Passed, StartedMS: MS(at), DurationMS: MS(d / 2)}},
			Step{StepBase: StepBase{Path: fmt.Sprintf("0#%d.1", i), Kind: "expect", Status: st, StartedMS: MS(at + d/2), DurationMS: MS(d - d/2), Message: fmt.Sprintf("iteration %d", i)}})
		at += d + time.Millisecond
	}
	return append(out, Step{StepBase: StepBase{Path: "0", Kind: "repeat", Status: worst, DurationMS: MS(at)}})
}

// summarize runs steps through a Summarizer and returns what it passed on.
func summarize(opts Options, steps []Step) ([]Step, Counts) {
	var got []Step
	var counts Counts
	z := &Summarizer{
		Options: opts,
		OnStep:  func(_ int, st *Step) { got = append(got, *st) },
		OnEnd:   func(_ int, _ *Sequence, c Counts) { counts = c },
	}
	z.Add(&Record{Type: RecordStart, Sequence: &Sequence{}})
	for i := range steps {
		z.Add(&Record{Type: RecordStep, Step: &steps[i]})
	}
	z.Add(&Record{Type: RecordEnd, Sequence: &Sequence{}})
	return got, counts
}

func TestRepeatSummary(t *testing.T) {
	ms := func(i int) time.Duration { return time.Duration(i+1) * time.Millisecond }
	tests := []struct {
		name         string
		n            int
		fail         func(int) bool
		cap          int
		wantFailures []int
		wantMore     int
	}{
		{"all pass", 10, func(int) bool { return false }, 0, nil, 0},
		{"odd fail", 10, func(i int) bool { return i%2 == 1 }, 0, []int{1, 3, 5, 7, 9}, 0},
		{"over the cap", 10, func(i int) bool { return i%2 == 1 }, 2, []int{1, 3}, 3},
		{"default cap", 250, func(int) bool { return true }, 0, nil, 150},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, counts := summarize(Options{MaxFailures: tt.cap}, iterations(tt.n, tt.fail, ms))
			if len(got) != 1 || got[0].Repeat == nil {
				t.Fatalf("got %d steps, want the repeat alone with its summary", len(got))
			}
			r := got[0].Repeat
			failed := 0
			for i := 0; i < tt.n; i++ {
				if tt.fail(i) {
					failed++
				}
			}
			if r.Iterations != tt.n || r.Failed != failed || r.Passed != tt.n-failed {
				t.Errorf("iterations/passed/failed = %d/%d/%d, want %d/%d/%d", r.Iterations, r.Passed, r.Failed, tt.n, tt.n-failed, failed)
			}
			if counts.Total != 2*tt.n || counts.Failed != failed {
				t.Errorf("counts %+v", counts)
			}
			var idx []int
			for _, it := range r.Failures {
				idx = append(idx, it.Index)
				if len(it.Detail) != 1 || it.Detail[0].Message != fmt.Sprintf("iteration %d", it.Index) {
					t.Errorf("failing iteration %d detail %+v", it.Index, it.Detail)
				}
			}
			if tt.wantFailures != nil && !slices.Equal(idx, tt.wantFailures) {
				t.Errorf("failures %v, want %v", idx, tt.wantFailures)
			}
			if tt.wantFailures == nil && failed > 0 && len(idx) != DefaultMaxFailures {
				t.Errorf("%d failures listed, want the default cap %d", len(idx), DefaultMaxFailures)
			}
			if r.MoreFailures != tt.wantMore {
				t.Errorf("more failures = %d, want %d", r.MoreFailures, tt.wantMore)
			}
			if r.First == nil || r.First.Index != 0 || len(r.First.Detail) != 2 || r.Last == nil || r.Last.Index != tt.n-1 {
				t.Errorf("first %+v last %+v", r.First, r.Last)
			}
			if r.MinMS.D() != time.Millisecond || r.MaxMS.D() != time.Duration(tt.n)*time.Millisecond {
				t.Errorf("min %v max %v", r.MinMS.D(), r.MaxMS.D())
			}
			// Nearest rank over 1..n ms.
			if want := time.Duration(math.Ceil(0.5*float64(tt.n))) * time.Millisecond; r.MedianMS.D() != want || !r.QuantilesExact {
				t.Errorf("median %v (exact %v), want %v", r.MedianMS.D(), r.QuantilesExact, want)
			}
		})
	}
}

// TestNestedRepeats checks that only the outer repeat reaches reports, with
// the inner repeat summarised in its iterations' detail.
func TestNestedRepeats(t *testing.T) {
	var steps []Step
	for i := 0; i < 3; i++ {
		for j := 0; j < 4; j++ {
			steps = append(steps, Step{StepBase: StepBase{Path: fmt.Sprintf("1#%d.0#%d.0", i, j), Kind: "send", Status: runner.Passed}})
		}
		steps = append(steps, Step{StepBase: StepBase{Path: fmt.Sprintf("1#%d.0", i), Kind: "repeat", Status: runner.Passed}})
	}
	steps = append([]Step{{StepBase: StepBase{Path: "0", Kind: "send", Status: runner.Passed}}}, steps...)
	steps = append(steps, Step{StepBase: StepBase{Path: "1", Kind: "repeat", Status: runner.Passed}},
		Step{StepBase: StepBase{Path: "2", Kind: "send", Status: runner.Passed}})
	got, counts := summarize(Options{}, steps)
	var paths []string
	for _, st := range got {
		paths = append(paths, st.Path)
	}
	if !slices.Equal(paths, []string{"0", "1", "2"}) {
		t.Fatalf("steps passed on: %v", paths)
	}
	r := got[1].Repeat
	if r == nil || r.Iterations != 3 || r.First == nil || r.First.Steps != 1 || r.First.Detail[0].Kind != "repeat" {
		t.Fatalf("outer repeat %+v", r)
	}
	if counts.Total != 14 {
		t.Errorf("counts %+v, want 14 steps that are not repeats", counts)
	}
}

// TestQuantileEstimate checks the histogram's documented accuracy: within
// 1% of the nearest-rank value once past exactLimit durations.
func TestQuantileEstimate(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var d durations
	var all []time.Duration
	for i := 0; i < 200_000; i++ {
		x := time.Duration(rng.ExpFloat64() * float64(300*time.Microsecond))
		all = append(all, x)
		d.add(x)
	}
	slices.Sort(all)
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
		want := all[int(math.Ceil(q*float64(len(all))))-1]
		got := d.quantile(q)
		if rel := math.Abs(float64(got-want)) / float64(want); rel > 0.01 {
			t.Errorf("q%.3f = %v, want %v within 1%% (off by %.2f%%)", q, got, want, rel*100)
		}
	}
	if len(d.buckets) > 1500 {
		t.Errorf("%d buckets", len(d.buckets))
	}
}

// TestStreamRoundTrip writes steps through a Stream and reads them back,
// 64-bit values intact.
func TestStreamRoundTrip(t *testing.T) {
	seq := runner.SequenceResult{Name: "s", Status: runner.Passed, StartedAt: time.Unix(1, 0), Steps: []runner.StepResult{
		{Path: "0", Kind: "mem_read", Status: runner.Passed, Duration: 1500 * time.Microsecond,
			Data: map[string]any{"values": []uint64{math.MaxUint64}, "raw": []byte{0, 0xff}}},
	}}
	path, err := WriteResults(t.TempDir(), []runner.SequenceResult{seq})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(path) != EventFile {
		t.Errorf("path %s", path)
	}
	var types []string
	var step *Step
	err = Read(path, func(r *Record) error {
		types = append(types, r.Type)
		if r.Step != nil {
			step = r.Step
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(types, []string{RecordStart, RecordStep, RecordEnd}) {
		t.Fatalf("records %v", types)
	}
	if v := fmt.Sprint(step.Data["values"]); v != "[18446744073709551615]" {
		t.Errorf("values = %s", v)
	}
	if step.Data["raw"] != `\x00\xff` || step.DurationMS.D() != 1500*time.Microsecond {
		t.Errorf("step %+v", step)
	}
}

// TestSummarizerLive feeds the same run's events to an event file and to a
// Summarizer as a sink: what the Summarizer passes on live is what a
// Summarize over the file passes on.
func TestSummarizerLive(t *testing.T) {
	path := filepath.Join(t.TempDir(), EventFile)
	stream, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	type seen struct {
		steps  []string
		counts []Counts
		ends   []string
	}
	collect := func(s *seen) *Summarizer {
		return &Summarizer{
			Options: Options{MaxFailures: 3},
			OnStep: func(seq int, st *Step) {
				b, err := json.Marshal(st)
				if err != nil {
					t.Fatal(err)
				}
				s.steps = append(s.steps, fmt.Sprintf("%d %s", seq, b))
			},
			OnEnd: func(seq int, sq *Sequence, c Counts) {
				s.counts = append(s.counts, c)
				s.ends = append(s.ends, fmt.Sprintf("%d %s %s %s", seq, sq.Name, sq.Status, sq.Error))
			},
		}
	}
	var live, file seen
	z := collect(&live)
	sink := runner.Tee(stream, z)
	start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for s, name := range []string{"first", "second"} {
		sink.Event(runner.Event{Type: runner.SequenceStarted, Sequence: name, File: name + ".yaml", Time: start})
		for i := 0; i < 12; i++ {
			st := runner.Passed
			if i%3 == 1 {
				st = runner.Failed
			}
			sink.Event(runner.Event{Type: runner.StepFinished, Step: &runner.StepResult{
				Index: 0, Path: fmt.Sprintf("0#%d.0", i), Kind: "send", Name: "echo", Status: st,
				Duration: time.Duration(i+1) * time.Millisecond, Message: "m",
				Saved: map[string]any{"n": int64(i), "big": uint64(1) << 63, "f": 1.5},
			}})
		}
		sink.Event(runner.Event{Type: runner.StepFinished, Step: &runner.StepResult{Index: 0, Path: "0", Kind: "repeat", Status: runner.Failed, Duration: 80 * time.Millisecond}})
		sink.Event(runner.Event{Type: runner.StepFinished, Step: &runner.StepResult{Index: 1, Path: "1", Kind: "delay", Status: runner.Passed, Data: map[string]any{"x": "y"}}})
		sink.Event(runner.Event{Type: runner.SequenceFinished, Result: &runner.SequenceResult{Name: name, Status: runner.Failed, Duration: time.Duration(s+1) * time.Second}})
	}
	if err := stream.Close(); err != nil {
		t.Fatal(err)
	}
	if err := Summarize(path, collect(&file)); err != nil {
		t.Fatal(err)
	}
	if len(live.steps) != 4 || len(live.counts) != 2 {
		t.Fatalf("live: %d steps and %d sequences, want 4 and 2", len(live.steps), len(live.counts))
	}
	if !slices.Equal(live.steps, file.steps) {
		t.Errorf("steps differ:\nlive %q\nfile %q", live.steps, file.steps)
	}
	if !slices.Equal(live.counts, file.counts) || !slices.Equal(live.ends, file.ends) {
		t.Errorf("ends differ:\nlive %v %q\nfile %v %q", live.counts, live.ends, file.counts, file.ends)
	}
}

// The steps of two branches of a parallel: step finish interleaved, each
// branch with a repeat of its own: each repeat is summarised over its own
// iterations.
func TestRepeatsInBranches(t *testing.T) {
	step := func(path, kind string, st runner.Status) Step {
		return Step{StepBase: StepBase{Path: path, Kind: kind, Status: st}}
	}
	got, counts := summarize(Options{}, []Step{
		step("0.a.0#0.0", "send", runner.Passed),
		step("0.b.0#0.0", "expect", runner.Passed),
		step("0.a.0#1.0", "send", runner.Failed),
		step("0.b.0#1.0", "expect", runner.Passed),
		step("0.b.0#2.0", "expect", runner.Passed),
		step("0.a.0", "repeat", runner.Failed),
		step("0.a", "branch", runner.Failed),
		step("0.b.0", "repeat", runner.Passed),
		step("0.b", "branch", runner.Passed),
		step("0", "parallel", runner.Failed),
	})
	var paths []string
	for _, st := range got {
		paths = append(paths, st.Path)
	}
	if fmt.Sprint(paths) != "[0.a.0 0.a 0.b.0 0.b 0]" {
		t.Fatalf("steps passed on: %v", paths)
	}
	if r := got[0].Repeat; r.Iterations != 2 || r.Failed != 1 {
		t.Errorf("a's repeat: %+v", r)
	}
	if r := got[2].Repeat; r.Iterations != 3 || r.Passed != 3 {
		t.Errorf("b's repeat: %+v", r)
	}
	if counts.Total != 5 || counts.Failed != 1 {
		t.Errorf("counts %+v: the containers are not counted", counts)
	}
}
