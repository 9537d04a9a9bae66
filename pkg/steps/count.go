package steps

import (
	"fmt"
	"math"
)

// Written counts the steps of seq as written in its file: every step that
// is not a group, a repeat, a parallel or a branch, finally steps included, each once however
// often it runs. It is the step count every hilrun command and report
// shows; what ran is counted apart, as executions (see Counted).
func Written(seq *Sequence) int {
	return written(seq.Steps) + written(seq.Finally)
}

func written(ss []*Step) int {
	n := 0
	for _, s := range ss {
		if IsContainer(s.Kind) {
			n += written(s.Steps) + written(s.Finally)
			continue
		}
		n++
	}
	return n
}

// Counted says how many steps a sequence has and how many times they ran,
// the one wording of validate, run --list, the console and the HTML
// report: "1 step", "18 steps", "18 steps, 42 executions". Executions are
// named only when repeats made more of them than there are steps; a run
// that stopped early says its steps, and its skipped count says the rest. A
// written count of 0 with executions, from an event file older than the
// count, says the executions as steps.
func Counted(written, executions int) string {
	if written == 0 {
		written = executions
	}
	s := plural(written, "step")
	if executions > written {
		s += ", " + plural(executions, "execution")
	}
	return s
}

// CountedPlan is Counted before a run: the executions are those its
// repeats allow at most ("up to 42 executions"), or, when only time
// bounds a repeat, said to depend on it.
func CountedPlan(seq *Sequence) string {
	w := Written(seq)
	n, bounded := Executions(seq)
	switch {
	case !bounded:
		return plural(w, "step") + ", executions bounded by time"
	case n == uint64(w):
		return plural(w, "step")
	case n == math.MaxUint64:
		return plural(w, "step") + ", " + count(n) + " executions"
	}
	return fmt.Sprintf("%s, up to %s", plural(w, "step"), plural(int(n), "execution"))
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
