package cli_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jstemmer/go-junit-report/v2/junit"

	"github.com/hilrun/hilrun/internal/cli"
)

// shardSuite copies into dir/sequences the sequences the shard tests run:
// the virtual board's serial ones and crafted ones that fail, error, skip
// and share a name across two files. It returns the folder.
func shardSuite(t *testing.T, dir string) string {
	t.Helper()
	seqDir := filepath.Join(dir, "sequences")
	copyFile := func(from, to string) {
		data, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"smoke.yaml", "stream.yaml", "failfast.yaml", "seed-serial-sequence.json"} {
		copyFile(filepath.Join("../../sequences/sim", f), filepath.Join(seqDir, "sim", f))
	}
	err := filepath.WalkDir("testdata/shards", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel("testdata/shards", p)
		copyFile(p, filepath.Join(seqDir, "crafted", rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return seqDir
}

// hilrunIn runs hilrun in-process in dir and returns its exit code and
// output.
func hilrunIn(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	t.Chdir(dir)
	var out, errOut bytes.Buffer
	code := cli.Main(args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

// reportFacts is what a merged report must share with the single run's:
// every sequence and test case with its status, and the totals. Times,
// timestamps, ids and what the board printed may differ.
func reportFacts(t *testing.T, jsonPath, junitPath string) string {
	t.Helper()
	var b strings.Builder
	data, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Passed    *bool `json:"passed"`
		Sequences []struct {
			Name, File, Status string
			Counts             map[string]int
			Steps              []struct{ Path, Kind, Status string }
		}
	}
	if err := json.Unmarshal(data, &doc); err != nil || doc.Passed == nil {
		t.Fatalf("%s: not a JSON report: %v\n%s", jsonPath, err, data)
	}
	fmt.Fprintf(&b, "json passed=%t\n", *doc.Passed)
	var lines []string
	for _, s := range doc.Sequences {
		var st []string
		for _, step := range s.Steps {
			st = append(st, step.Path+" "+step.Kind+" "+step.Status)
		}
		lines = append(lines, fmt.Sprintf("json %s %q %s %v steps[%s]", s.File, s.Name, s.Status, s.Counts, strings.Join(st, ", ")))
	}
	slices.Sort(lines)
	b.WriteString(strings.Join(lines, "\n") + "\n")

	data, err = os.ReadFile(junitPath)
	if err != nil {
		t.Fatal(err)
	}
	var suites junit.Testsuites
	if err := xml.Unmarshal(data, &suites); err != nil {
		t.Fatalf("%s: not a JUnit report: %v", junitPath, err)
	}
	fmt.Fprintf(&b, "junit tests=%d failures=%d errors=%d skipped=%d suites=%d\n", suites.Tests, suites.Failures, suites.Errors, suites.Skipped, len(suites.Suites))
	lines = nil
	for _, s := range suites.Suites {
		lines = append(lines, fmt.Sprintf("junit suite %s %q tests=%d failures=%d errors=%d skipped=%d", s.File, s.Name, s.Tests, s.Failures, s.Errors, s.Skipped))
		for _, tc := range s.Testcases {
			status := "passed"
			switch {
			case tc.Error != nil:
				status = "error"
			case tc.Failure != nil:
				status = "failure"
			case tc.Skipped != nil:
				status = "skipped"
			}
			lines = append(lines, fmt.Sprintf("junit case %s %q %q %s", s.File, tc.Classname, tc.Name, status))
		}
	}
	slices.Sort(lines)
	b.WriteString(strings.Join(lines, "\n") + "\n")
	return b.String()
}

// TestShardsMergeToSingleRun runs the suite on the virtual board once
// whole, then split into N = 1..4 shards, balanced by count and by the
// single run's durations, merges each split's reports and checks that
// they hold the same sequences, test cases, statuses and totals as the
// single run's.
func TestShardsMergeToSingleRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite 21 times")
	}
	dir := t.TempDir()
	shardSuite(t, dir)
	code, _, errOut := hilrunIn(t, dir, "run", "--sim", "--json", "all.json", "--junit", "all.xml", "sequences")
	if code != cli.ExitInfra {
		t.Fatalf("the single run exited %d, want 3 (a sequence errors): %s", code, errOut)
	}
	want := reportFacts(t, filepath.Join(dir, "all.json"), filepath.Join(dir, "all.xml"))
	checkJUnitSchema(t, filepath.Join(dir, "all.xml"))
	for _, byTime := range []bool{false, true} {
		for n := 1; n <= 4; n++ {
			name := fmt.Sprintf("N=%d by count", n)
			if byTime {
				name = fmt.Sprintf("N=%d by durations", n)
			}
			t.Run(name, func(t *testing.T) {
				out := t.TempDir()
				var inputs []string
				for i := 1; i <= n; i++ {
					js, ju := filepath.Join(out, fmt.Sprintf("s%d.json", i)), filepath.Join(out, fmt.Sprintf("s%d.xml", i))
					args := []string{"run", "--sim", "--shard", fmt.Sprintf("%d/%d", i, n), "--json", js, "--junit", ju, "sequences"}
					if byTime {
						args = append(args, "--durations", "all.json")
					}
					code, _, errOut := hilrunIn(t, dir, args...)
					if code != 0 && code != cli.ExitFailed && code != cli.ExitInfra {
						t.Fatalf("shard %d/%d exited %d: %s", i, n, code, errOut)
					}
					if !strings.Contains(errOut, fmt.Sprintf("shard %d/%d: ", i, n)) {
						t.Errorf("shard %d/%d does not say what share it runs: %s", i, n, errOut)
					}
					inputs = append(inputs, js, ju)
				}
				slices.Reverse(inputs) // the order of the inputs does not matter
				mj, mx := filepath.Join(out, "merged.json"), filepath.Join(out, "merged.xml")
				code, _, errOut := hilrunIn(t, dir, append([]string{"report", "merge", "--json", mj, "--junit", mx}, inputs...)...)
				if code != 0 {
					t.Fatalf("report merge exited %d: %s", code, errOut)
				}
				checkJUnitSchema(t, mx)
				if got := reportFacts(t, mj, mx); got != want {
					t.Errorf("the merged reports differ from the single run's:\n%s", factsDiff(got, want))
				}
			})
		}
	}
}

// TestShardListAndErrors checks --list with --shard and the refusals of
// bad --shard and --durations values and of merges that lose or repeat
// sequences.
func TestShardListAndErrors(t *testing.T) {
	dir := t.TempDir()
	shardSuite(t, dir)
	var lists []string
	for i := 1; i <= 3; i++ {
		code, out, errOut := hilrunIn(t, dir, "run", "--list", "--shard", fmt.Sprintf("%d/3", i), "-k", "not stream", "sequences")
		if code != 0 {
			t.Fatalf("--list --shard %d/3 exited %d: %s", i, code, errOut)
		}
		if !strings.Contains(out, fmt.Sprintf("shard %d/3: %d of 8 sequences", i, []int{3, 3, 2}[i-1])) {
			t.Errorf("--list --shard %d/3 does not say its share of the 8 sequences -k keeps:\n%s", i, out)
		}
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "sequences/") {
				lists = append(lists, strings.SplitN(l, ":", 2)[0])
			}
		}
	}
	slices.Sort(lists)
	if len(lists) != 8 || len(slices.Compact(slices.Clone(lists))) != 8 || slices.ContainsFunc(lists, func(s string) bool { return strings.Contains(s, "stream") }) {
		t.Errorf("the three shards list %v, want the 8 files -k keeps, each once", lists)
	}

	notReport := filepath.Join(dir, "notes.json")
	if err := os.WriteFile(notReport, []byte(`{"tests": 3}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"shard out of range", []string{"run", "--list", "--shard", "5/4", "sequences"}, "the shard must be from 1 to 4"},
		{"shard zero", []string{"run", "--list", "--shard", "0/4", "sequences"}, "the shard must be from 1 to 4"},
		{"no shards", []string{"run", "--list", "--shard", "1/0", "sequences"}, "the number of shards must be 1 or more"},
		{"not I/N", []string{"run", "--list", "--shard", "half", "sequences"}, "want I/N"},
		{"durations without shard", []string{"run", "--list", "--durations", "notes.json", "sequences"}, "give --shard I/N too"},
		{"durations not a report", []string{"run", "--list", "--shard", "1/2", "--durations", "notes.json", "sequences"}, `notes.json: not a hilrun report: it has no "sequences" list`},
		{"merge nothing to write", []string{"report", "merge", "notes.json"}, "--junit FILE, --json FILE, --html FILE or more than one"},
		{"merge not a report", []string{"report", "merge", "--json", "m.json", "notes.json"}, "not a hilrun report"},
		{"merge junit without junit", []string{"report", "merge", "--junit", "m.xml", "notes.json"}, "--junit needs JUnit reports"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := hilrunIn(t, dir, tt.args...)
			if code != cli.ExitInvalid || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errOut, tt.want)
			}
		})
	}

	// The same shard twice: a duplicate, named. JSON and JUnit of
	// different shards: refused.
	code, _, errOut := hilrunIn(t, dir, "run", "--sim", "--shard", "1/2", "-k", "groups", "--json", "a.json", "--junit", "a.xml", "sequences")
	if code != 0 {
		t.Fatalf("shard 1/2 of the groups exited %d: %s", code, errOut)
	}
	code, _, errOut = hilrunIn(t, dir, "report", "merge", "--json", "m.json", "a.json", "a.json")
	if code != cli.ExitInvalid || !strings.Contains(errOut, `sequence "groups" (sequences/crafted/`) || !strings.Contains(errOut, "is twice in a.json") {
		t.Errorf("a duplicate: exit %d, %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "m.json")); err == nil {
		t.Errorf("a refused merge wrote its report")
	}
	code, _, errOut = hilrunIn(t, dir, "run", "--sim", "--shard", "2/2", "-k", "groups", "--json", "b.json", "--junit", "b.xml", "sequences")
	if code != 0 {
		t.Fatalf("shard 2/2 of the groups exited %d: %s", code, errOut)
	}
	code, _, errOut = hilrunIn(t, dir, "report", "merge", "--json", "m.json", "--junit", "m.xml", "a.json", "b.json", "a.xml")
	if code != cli.ExitInvalid || !strings.Contains(errOut, "not of the same runs: only the JSON reports hold") {
		t.Errorf("JSON and JUnit of different shards: exit %d, %s", code, errOut)
	}
	code, _, errOut = hilrunIn(t, dir, "report", "merge", "--json", "m.json", "--junit", "m.xml", "a.json", "b.json", "b.xml", "a.xml")
	if code != 0 {
		t.Fatalf("merge exited %d: %s", code, errOut)
	}

	// A shard missing: the reports are written, and the exit is 3.
	code, _, errOut = hilrunIn(t, dir, "report", "merge", "--json", "half.json", "--junit", "half.xml", "a.json", "a.xml")
	if code != cli.ExitInfra || !strings.Contains(errOut, "written, but incomplete") || !strings.Contains(errOut, "holds 1 of the 2 sequences the shards were cut from: shard 2/2 is missing") {
		t.Errorf("a shard missing: exit %d, %s", code, errOut)
	}
	for _, f := range []string{"half.json", "half.xml"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("an incomplete merge did not write %s: %v", f, err)
		}
	}

	// Two files in three shards: the third is empty, runs nothing, passes,
	// and its reports merge with the others'.
	code, _, errOut = hilrunIn(t, dir, "run", "--sim", "--shard", "3/3", "-k", "groups", "--json", "c.json", "--junit", "c.xml", "sequences")
	if code != 0 || !strings.Contains(errOut, "shard 3/3: 0 of 2 sequences: nothing to run here") {
		t.Fatalf("an empty shard: exit %d, %s", code, errOut)
	}
	for i := 1; i <= 2; i++ {
		code, _, errOut = hilrunIn(t, dir, "run", "--sim", "--shard", fmt.Sprintf("%d/3", i), "-k", "groups", "--json", fmt.Sprintf("t%d.json", i), "--junit", fmt.Sprintf("t%d.xml", i), "sequences")
		if code != 0 {
			t.Fatalf("shard %d/3: exit %d, %s", i, code, errOut)
		}
	}
	code, _, errOut = hilrunIn(t, dir, "report", "merge", "--json", "m3.json", "--junit", "m3.xml", "t1.json", "t2.json", "c.json", "t1.xml", "t2.xml", "c.xml")
	if code != 0 {
		t.Fatalf("merging with an empty shard: exit %d, %s", code, errOut)
	}
}

// factsDiff lists the lines only one of got and want has.
func factsDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	var b strings.Builder
	for _, l := range g {
		if !slices.Contains(w, l) {
			b.WriteString("only merged:     " + l + "\n")
		}
	}
	for _, l := range w {
		if !slices.Contains(g, l) {
			b.WriteString("only single run: " + l + "\n")
		}
	}
	return b.String()
}

// TestShardMissingDurations runs a team's first sharded run: the
// durations file the CI template names does not exist yet, so the shards
// are balanced by count, with a warning, not refused.
func TestShardMissingDurations(t *testing.T) {
	dir := t.TempDir()
	shardSuite(t, dir)
	for i := 1; i <= 2; i++ {
		shard := fmt.Sprintf("%d/2", i)
		code, byCount, errOut := hilrunIn(t, dir, "run", "--list", "--shard", shard, "sequences")
		if code != 0 {
			t.Fatalf("--list --shard %s exited %d: %s", shard, code, errOut)
		}
		code, out, errOut := hilrunIn(t, dir, "run", "--list", "--shard", shard, "--durations", "ci/gone.json", "sequences")
		if code != 0 {
			t.Fatalf("--shard %s with a missing --durations file exited %d: %s", shard, code, errOut)
		}
		if !strings.Contains(errOut, "--durations ci/gone.json does not exist (yet): the shards are balanced by count") {
			t.Errorf("shard %s: no warning about the missing durations file: %q", shard, errOut)
		}
		if out != byCount {
			t.Errorf("shard %s with a missing durations file lists\n%s\nwant the count-balanced list\n%s", shard, out, byCount)
		}
	}
}
