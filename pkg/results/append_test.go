package results_test

import (
	"path/filepath"
	"testing"

	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
)

// Two sequences recorded apart, as a pool's benches record them, append
// whole to one stream: numbered after what it holds, each naming its
// bench.
func TestAppendNamesTheBench(t *testing.T) {
	dir := t.TempDir()
	record := func(path, name string) {
		s, err := results.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		s.Event(runner.Event{Type: runner.SequenceStarted, Sequence: name, File: name + ".yaml"})
		s.Event(runner.Event{Type: runner.StepFinished, Step: &runner.StepResult{Path: "0", Kind: "send", Status: runner.Passed}})
		s.Event(runner.Event{Type: runner.SequenceFinished, Result: &runner.SequenceResult{Name: name, File: name + ".yaml", Status: runner.Passed}})
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	main := filepath.Join(dir, "events.jsonl")
	record(main, "first")
	s, err := results.Create(filepath.Join(dir, "run.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	record(a, "on-a")
	record(b, "on-b")
	for _, x := range []struct{ path, bench string }{{main, ""}, {b, "b"}, {a, "a"}} {
		if err := s.Append(x.path, x.bench); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	type seen struct {
		typ, name, bench string
		seq              int
	}
	var got []seen
	if err := results.Read(s.Path(), func(r *results.Record) error {
		g := seen{typ: r.Type, seq: r.Seq}
		if r.Sequence != nil {
			g.name, g.bench = r.Sequence.Name, r.Sequence.Bench
		}
		got = append(got, g)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := []seen{
		{"start", "first", "", 0}, {"step", "", "", 0}, {"end", "first", "", 0},
		{"start", "on-b", "b", 1}, {"step", "", "", 1}, {"end", "on-b", "b", 1},
		{"start", "on-a", "a", 2}, {"step", "", "", 2}, {"end", "on-a", "a", 2},
	}
	if len(got) != len(want) {
		t.Fatalf("records %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("record %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}
