package steps_test

import (
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/steps"
)

const twoDevices = `devices:
  a: {port: /dev/ttyA}
  b: {port: /dev/ttyB}
`

func TestParseParallel(t *testing.T) {
	src := twoDevices + `steps:
  - parallel:
      sender:
        - barrier: ready
        - send: tx hello
          to: a
        - set: {sent: yes}
      receiver:
        steps:
          - barrier: ready
            timeout: 2s
          - expect: {regex: "rx (\\w+)"}
            to: b
            save: [line]
        finally:
          - send: echo done
            to: b
    on_failure: continue
  - assert: branches.sender.sent == "yes"
  - send: "got ${branches.receiver.line}"
    to: a
`
	seq, err := steps.Parse("p.yaml", []byte(src), steps.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := seq.Steps[0]
	if p.Kind != steps.KindParallel || len(p.Steps) != 2 || steps.ParallelOnFailure(seq, p) != steps.Continue {
		t.Fatalf("parallel step = %+v", p)
	}
	send, recv := p.Steps[0], p.Steps[1]
	if send.Kind != steps.KindBranch || send.Name != "sender" || len(send.Steps) != 3 || recv.Name != "receiver" || len(recv.Finally) != 1 {
		t.Errorf("branches = %+v, %+v", send, recv)
	}
	if steps.BarrierName(send.Steps[0]) != "ready" || recv.Steps[0].Timeout.String() != "2s" {
		t.Errorf("barriers = %+v, %+v", send.Steps[0], recv.Steps[0])
	}
	if p.Title() != "parallel sender, receiver" || send.Steps[0].Title() != "ready" {
		t.Errorf("titles %q, %q", p.Title(), send.Steps[0].Title())
	}
	if n := steps.Written(seq); n != 8 {
		t.Errorf("Written = %d, want 8: the steps of both branches, the finally step, and the two after", n)
	}
	if n, _ := steps.Executions(seq); n != 8 {
		t.Errorf("Executions = %d, want 8", n)
	}
	var kinds []string
	steps.Walk(seq, func(s *steps.Step) { kinds = append(kinds, string(s.Kind)) })
	if got := strings.Join(kinds, ","); got != "parallel,branch,barrier,send,set,branch,barrier,expect,send,assert,send" {
		t.Errorf("Walk = %s", got)
	}
}

func TestParallelErrors(t *testing.T) {
	branch := func(name, body string) string { return "      " + name + ":\n" + body }
	send := func(to string) string { return "        - send: x\n          to: " + to + "\n" }
	barrier := func(name string) string { return "        - barrier: " + name + "\n" }
	par := func(branches ...string) string {
		return twoDevices + "steps:\n  - parallel:\n" + strings.Join(branches, "")
	}
	tests := []struct {
		name, src, want string
	}{
		{"one branch", par(branch("a", send("a"))), "p.yaml:6:7: a parallel needs at least two branches, found 1"},
		{"not a mapping", twoDevices + "steps:\n  - parallel: [a, b]\n", "p.yaml:5:15: parallel must map branch names to lists of steps"},
		{"branch name", par(branch("a-b", send("a")), branch("c", send("b"))), `p.yaml:6:7: branch name "a-b" must be a name of letters, digits and underscores`},
		{"reserved name", par(branch("finally", send("a")), branch("c", send("b"))), `branch name "finally" is kept for the finally steps`},
		{"branch scalar", par(branch("a", "        x\n"), branch("c", send("b"))), "p.yaml:7:9: branch a must be a list of steps, or a mapping such as {steps: [...], finally: [...]}, found the text"},
		{"branch empty", par("      a: []\n", branch("c", send("b"))), "p.yaml:6:10: branch a has no steps"},
		{"branch unknown key", par("      a: {steps: [{send: x, to: a}], finaly: []}\n", branch("c", send("b"))), `unknown key "finaly" in branch a (did you mean "finally"?)`},
		{"branch without steps", par("      a: {finally: [{send: x, to: a}]}\n", branch("c", send("b"))), "branch a needs a steps: list"},
		{"device in two branches", par(branch("x", send("a")), branch("y", send("a"))),
			"p.yaml:10:11: device a is used by branch x (line 7) and by branch y: a device or probe belongs to one branch of a parallel:"},
		{"probe in two branches", "probes:\n  board: {openocd: 127.0.0.1:4444}\n" + "steps:\n  - parallel:\n" +
			branch("x", "        - halt: true\n") + branch("y", "        - reset: run\n"), "device or probe belongs to one branch"},
		{"nested", par(branch("x", "        - parallel:\n            p: [{send: x, to: a}]\n            q: [{send: y, to: b}]\n"), branch("y", send("b"))),
			"a parallel: inside branch x of another is refused"},
		{"retries in a branch", par(branch("x", "        - group: g\n          retries: 1\n          steps: [{send: x, to: a}]\n"), branch("y", send("b"))),
			"p.yaml:8:20: retries: is refused inside branch x of a parallel: a retried branch could not meet the other branches at their barriers"},
		{"barrier outside", twoDevices + "steps:\n  - barrier: x\n", "p.yaml:5:5: barrier: waits for the other branches of a parallel: step, and this step is in none"},
		{"barrier in one branch", par(branch("x", barrier("go")+send("a")), branch("y", send("b"))),
			"p.yaml:7:11: barrier go is named only by branch x: a barrier waits until every branch that names it arrives, so at least two branches must name it"},
		{"barrier counts", par(branch("x", barrier("go")+barrier("go")), branch("y", barrier("go"))),
			"barrier go is reached 2 times by branch x (line 7) but once by branch y (line 10): every branch that names a barrier must reach it as often"},
		{"barrier in a repeat by count", par(branch("x", "        - repeat: 3\n          steps: [{barrier: go}]\n"), branch("y", barrier("go"))),
			"barrier go is reached 3 times by branch x"},
		{"barrier in a timed repeat", par(branch("x", "        - repeat: {for: 1s}\n          steps: [{barrier: go}]\n"), branch("y", barrier("go"))),
			"p.yaml:8:19: barrier go is inside a repeat that runs for: 1s without every:, so how often each branch reaches it depends on timing"},
		{"barrier order", par(branch("x", barrier("one")+barrier("two")), branch("y", barrier("two")+barrier("one"))),
			"p.yaml:7:11: the barriers of this parallel: would wait for each other forever: branch x waits at barrier one (line 7) for branch y, which waits at barrier two (line 10)"},
		{"three-way wait", par(branch("x", barrier("p")+barrier("q")), branch("y", barrier("q")+barrier("r")), "      z:\n        - barrier: r\n        - barrier: p\n"),
			"would wait for each other forever"},
		{"barrier in a branch's finally", par("      x:\n        steps: [{barrier: go}]\n        finally: [{barrier: go}]\n", branch("y", barrier("go"))),
			"a barrier in the finally: steps of branch x is refused"},
		{"barrier name", par(branch("x", barrier("a b")), branch("y", barrier("c"))), `barrier "a b" must be a name of letters, digits and underscores`},
		{"another branch's variable", par(branch("x", "        - set: {v: 1}\n"), branch("y", "        - send: ${v}\n          to: b\n")),
			`variable "v" is not defined here`},
		{"a branch variable's plain name after", par(branch("x", "        - set: {v: 1}\n"), branch("y", send("b"))) + "  - send: ${v}\n    to: a\n",
			`variable "v" is not defined here`},
		{"unknown branch", par(branch("x", "        - set: {v: 1}\n"), branch("y", send("b"))) + "  - send: ${branches.z.v}\n    to: a\n",
			`variable "branches.z.v" is not defined here: no branch z ran before this step`},
		{"unsaved variable", par(branch("x", "        - set: {v: 1}\n"), branch("y", send("b"))) + "  - assert: branches.x.w == 1\n",
			`variable "branches.x.w" is not defined here: branch x saves no variable w (did you mean "v"?)`},
		{"branches before any parallel", twoDevices + "steps:\n  - send: ${branches.x.v}\n    to: a\n",
			`variable "branches.x.v" is not defined here: no parallel: step comes before this step`},
		{"another branch's step result", par(branch("x", "        - send: x\n          to: a\n          id: sx\n"), branch("y", "        - assert: steps.sx.status == \"passed\"\n")),
			`p.yaml:11:19: steps.sx is the result of a step of branch x, which runs beside branch y`},
		{"another branch's step result in its finally", par(branch("x", "        - send: x\n          to: a\n          id: sx\n"), "      y:\n        steps: [{send: y, to: b}]\n        finally: [{assert: 'steps[\"sx\"].status == \"passed\"'}]\n"),
			`steps.sx is the result of a step of branch x, which runs beside branch y`},
		{"branches as a variable", "vars: {branches: 1}\n" + par(branch("x", send("a")), branch("y", send("b"))),
			"a variable named branches is defined before this parallel:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := steps.Parse("p.yaml", []byte(tt.src), steps.LoadOptions{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v\nwant %q", err, tt.want)
			}
		})
	}
}

// Barriers that every branch reaches as often and in the same order
// load, in repeats and matrices too.
func TestParallelBarriersThatLoad(t *testing.T) {
	src := twoDevices + `steps:
  - parallel:
      x:
        - barrier: one
        - repeat: {count: 3, as: i}
          steps:
            - barrier: tick
            - send: "tx ${i}"
              to: a
        - barrier: two
      y:
        - barrier: one
        - group: cases
          matrix: {n: [1, 2, 3]}
          steps:
            - barrier: tick
        - repeat: {for: 1s, every: 100ms}
          steps: [{expect: x, to: b}]
        - barrier: two
      z:
        - barrier: one
        - barrier: two
`
	if _, err := steps.Parse("p.yaml", []byte(src), steps.LoadOptions{}); err != nil {
		t.Fatal(err)
	}
}

// A branch reads the results of its own steps by id; the steps after the
// parallel: read those of every branch.
func TestParallelStepIDsThatLoad(t *testing.T) {
	src := twoDevices + `steps:
  - parallel:
      x:
        - {send: x, to: a, id: sx}
        - assert: steps.sx.status == "passed"
      y:
        - {send: y, to: b, id: sy}
  - assert: steps.sx.status == "passed" && steps.sy.status == "passed"
`
	if _, err := steps.Parse("p.yaml", []byte(src), steps.LoadOptions{}); err != nil {
		t.Fatal(err)
	}
}
