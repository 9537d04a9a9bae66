package runner_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

// Expressions that would loop for ever or fill memory end their step with
// an error that names the budget they ran out of and the flag that raises
// it.
func TestExprBudgets(t *testing.T) {
	const s30k = "  - set: {s: {expr: 'repeat(\"x\", 30000)'}}\n"
	tests := []struct {
		name string
		src  string
		opts runner.Options
		want string
	}{
		{"lists of lists", s30k + "  - assert: 'len(map(split(s, \"\"), {split(s, \"\")})) > 0'\n",
			runner.Options{}, "split would make lists and maps of more than 16777216 bytes, past the expression memory budget of one evaluation"},
		{"nested loops", s30k + "  - assert: 'let l = split(s, \"\"); all(l, {all(l, {all(l, {true})})})'\n",
			runner.Options{}, "all would pass the expression work budget of 1000000 operations for one evaluation (1:43) (--max-expr-work raises it)"},
		{"a loop without a predicate in a loop", s30k + "  - assert: 'let l = split(s, \"\"); let n = map(l, {1}); all(l, {sum(n) > 0})'\n",
			runner.Options{}, "expression work budget"},
		{"membership in a loop", s30k + "  - assert: 'let l = split(s, \"\"); all(l, {# in l})'\n",
			runner.Options{}, "expression work budget"},
		{"a regexp over long text in a loop", s30k + "  - assert: 'let l = split(s, \"\"); none(l, {s matches \"y\"})'\n",
			runner.Options{}, "expression work budget"},
		{"a number parsed from long text in a loop", "  - set: {s: {expr: 'repeat(\"0\", 100000) + \"1\"'}}\n  - assert: 'let l = split(s, \"\"); all(l, {num(s) > 0})'\n",
			runner.Options{}, "expression work budget"},
		{"upper case in a loop", s30k + "  - assert: 'len(map(split(s, \"\"), {upper(s)})) > 0'\n",
			runner.Options{}, "expression text budget"},
		{"JSON parsed in a loop", "  - set: {j: {expr: '\"[\" + repeat(\"0,\", 100000) + \"0]\"'}}\n  - assert: 'len(map(1..1000, {fromJSON(j)})) > 0'\n",
			runner.Options{}, "fromJSON would make lists and maps of more than 16777216 bytes"},
		{"a range", "  - set: {l: {expr: '1..100000000'}}\n",
			runner.Options{}, "expression memory budget"},
		{"max over lists of lists", "  - assert: 'let a = 1..1000; let b = map(1..1000, {a}); let c = map(1..1000, {b}); let d = map(1..1000, {c}); max(d) == 1000'\n",
			runner.Options{}, "max would pass the expression work budget"},
		{"flatten of lists of lists", "  - assert: 'let a = 1..1000; let b = map(1..1000, {a}); let c = map(1..100, {b}); len(flatten(c)) > 0'\n",
			runner.Options{}, "flatten would pass the expression work budget"},
		{"median of lists of lists", "  - assert: 'let a = 1..1000; let b = map(1..1000, {a}); let c = map(1..1000, {b}); median(c) > 0'\n",
			runner.Options{}, "median would pass the expression work budget"},
		{"lists of lists compared", "  - assert: 'let a = 1..1000; let b = map(1..1000, {a}); let c = map(1..1000, {b}); c == c'\n",
			runner.Options{}, "expression work budget"},
		{"lists of lists as JSON", "  - assert: 'let a = 1..1000; let b = map(1..1000, {a}); let c = map(1..1000, {b}); len(toJSON(c)) > 0'\n",
			runner.Options{}, "expression work budget"},
		{"a lower work budget", "  - assert: 'all(1..1000, {true})'\n",
			runner.Options{MaxExprWork: 500}, "work budget of 500 operations"},
		{"a lower memory budget", "  - set: {l: {expr: 'split(\"a,b,c,d,e,f,g,h,i,j\", \",\")'}}\n",
			runner.Options{MaxExprMemory: 64}, "lists and maps of more than 64 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seq := load(t, "steps:\n"+tt.src)
			opts := tt.opts
			opts.KeepSteps = true
			res := runner.Run(context.Background(), seq, runner.Bench{}, opts)
			got := lastLeaf(res)
			if res.Status != runner.Errored || got.Status != runner.Errored || !strings.Contains(got.Message, tt.want) {
				t.Errorf("run %s, step %s %s: %q\nwant an error containing %q", res.Status, got.Path, got.Status, got.Message, tt.want)
			}
		})
	}
}

// What a real sequence asks of expressions stays well within the budgets.
func TestExprWithinBudgets(t *testing.T) {
	seq := load(t, "vars: {log: \"a=1\\nb=2\\nc=3\\n\"}\nsteps:\n"+
		"  - set: {lines: {expr: 'filter(split(log, \"\\n\"), {# != \"\"})'}}\n"+
		"  - assert: 'len(lines) == 3 && all(lines, {# contains \"=\"})'\n"+
		"  - assert: 'sum(map(lines, {int(split(#, \"=\")[1])})) == 6'\n"+
		"  - assert: 'len(filter(1..10000, {# % 7 == 0})) == 1428'\n"+
		"  - assert: 'upper(join(sort(keys({b: 1, a: 2})), \"-\")) == \"A-B\"'\n"+
		"  - set: {m: {expr: 'fromPairs(map(1..5000, {[string(#), #]}))'}}\n"+
		"  - assert: 'all(1..5000, {string(#) in m})'\n")
	res := runner.Run(context.Background(), seq, runner.Bench{}, runner.Options{
		KeepSteps: true,
	})
	if res.Status != runner.Passed {
		t.Fatalf("run %s: %s; %s", res.Status, res.Error, statuses(res))
	}
}

// An expression stops when its step's context ends, however large its
// budgets: the sequence's timeout ends it.
func TestExprStopsAtTimeout(t *testing.T) {
	seq := load(t, "timeout: 1s\nsteps:\n  - set: {s: {expr: 'repeat(\"x\", 30000)'}}\n"+
		"  - assert: 'let l = split(s, \"\"); all(l, {all(l, {all(l, {true})})})'\n")
	done := make(chan *runner.SequenceResult, 1)
	go func() {
		done <- runner.Run(context.Background(), seq, runner.Bench{}, runner.Options{
			KeepSteps:   true,
			MaxExprWork: 1 << 62,
		})
	}()
	select {
	case res := <-done:
		got := lastLeaf(res)
		if got.Status != runner.Failed || !strings.Contains(got.Message, "sequence timeout after 1s") {
			t.Errorf("step %s %s: %q, want the sequence timeout", got.Path, got.Status, got.Message)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the expression ran on past the sequence's timeout")
	}
}

func TestExprBudgetErrorsAreTyped(t *testing.T) {
	if errors.Is(steps.ErrExprWork, steps.ErrExprMemory) || errors.Is(steps.ErrExprWork, steps.ErrExprBudget) {
		t.Fatal("the budgets share an error")
	}
}

// Cancelling the run stops an expression at once, however large its
// budgets.
func TestExprStopsWhenCancelled(t *testing.T) {
	seq := load(t, "steps:\n  - set: {s: {expr: 'repeat(\"x\", 30000)'}}\n"+
		"  - assert: 'let l = split(s, \"\"); all(l, {all(l, {all(l, {true})})})'\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sink := runner.SinkFunc(func(e runner.Event) {
		if e.Type == runner.StepStarted && e.Step != nil && e.Step.Kind == "assert" {
			cancel()
		}
	})
	done := make(chan *runner.SequenceResult, 1)
	go func() {
		done <- runner.Run(ctx, seq, runner.Bench{}, runner.Options{
			KeepSteps:   true,
			MaxExprWork: 1 << 62,
			Sink:        sink,
		})
	}()
	select {
	case res := <-done:
		if res.Status != runner.Interrupted {
			t.Errorf("run %s, want interrupted; %s", res.Status, statuses(res))
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the expression ran on after the run was cancelled")
	}
}
