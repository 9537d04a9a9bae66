package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
)

// writeShard writes the JSON and JUnit reports of seqs into dir, as one
// shard of a run would have, and returns their paths.
func writeShard(t *testing.T, dir, name string, seqs []runner.SequenceResult, shard *Shard) (jsonPath, junitPath string) {
	t.Helper()
	jsonPath, junitPath = filepath.Join(dir, name+".json"), filepath.Join(dir, name+".xml")
	events := eventFile(t, seqs)
	var js, ju bytes.Buffer
	if err := WriteShardJSON(&js, events, results.Options{}, shard); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(jsonPath, js.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := JUnitOptions{Hostname: "bench-1", Now: func() time.Time { return base }, Shard: shard}
	if err := WriteJUnit(&ju, events, opts); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(junitPath, ju.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return jsonPath, junitPath
}

// TestMergeEqualsSingleRun splits the fixture's sequences into shards in
// several ways, an empty shard among them, and checks that merging the
// shards' reports, in any order, gives byte for byte the reports of the
// whole run, without the shards' marks (the fixture's sequences are in file order, as merge puts
// them, and its durations are whole milliseconds, so the sum of the
// rounded suite times is the rounded total).
func TestMergeEqualsSingleRun(t *testing.T) {
	all := fixture()
	var wantJSON bytes.Buffer
	if err := WriteJSON(&wantJSON, eventFile(t, all), results.Options{}); err != nil {
		t.Fatal(err)
	}
	wantJUnit := junitReport(t, all)
	tests := []struct {
		name   string
		shards [][]int
	}{
		{"one shard", [][]int{{0, 1, 2, 3, 4, 5}}},
		{"two", [][]int{{0, 2, 4}, {1, 3, 5}}},
		{"uneven, reversed", [][]int{{5, 4}, {3}, {0, 1, 2}}},
		{"one empty", [][]int{{2}, {}, {0, 1, 3, 4, 5}}},
		{"one each", [][]int{{5}, {4}, {3}, {2}, {1}, {0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			var jsons, junits []string
			for i, idx := range tt.shards {
				var part []runner.SequenceResult
				for _, j := range idx {
					part = append(part, all[j])
				}
				sh := &Shard{Index: i + 1, Total: len(tt.shards), Sequences: len(all), Plan: "p1"}
				js, ju := writeShard(t, dir, "shard"+string(rune('a'+i)), part, sh)
				jsons, junits = append(jsons, js), append(junits, ju)
			}
			var gotJSON, gotJUnit bytes.Buffer
			if err := MergeJSON(&gotJSON, files.Anywhere(), jsons); err != nil {
				t.Fatal(err)
			}
			if err := MergeJUnit(&gotJUnit, files.Anywhere(), junits); err != nil {
				t.Fatal(err)
			}
			if d := firstDiff(gotJSON.String(), wantJSON.String()); d != "" {
				t.Errorf("merged JSON differs from the single run's: %s", d)
			}
			if d := firstDiff(gotJUnit.String(), string(wantJUnit)); d != "" {
				t.Errorf("merged JUnit differs from the single run's: %s", d)
			}
		})
	}
}

// firstDiff describes the first line where got and want differ, "" when
// they are equal.
func firstDiff(got, want string) string {
	if got == want {
		return ""
	}
	gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(gl), len(wl)) {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			return fmt.Sprintf("line %d:\n got: %s\nwant: %s", i+1, g, w)
		}
	}
	return "?"
}

// TestMergeDuplicate checks that a sequence in two shards is an error that
// names it and both files, and that one in a single file twice is too.
func TestMergeDuplicate(t *testing.T) {
	all := fixture()
	dir := t.TempDir()
	a, ax := writeShard(t, dir, "a", all[:3], nil)
	b, bx := writeShard(t, dir, "b", all[2:], nil)
	for _, tc := range []struct {
		name  string
		merge func() error
		where string
	}{
		{"json", func() error { return MergeJSON(&bytes.Buffer{}, files.Anywhere(), []string{a, b}) }, "in both " + a + " and " + b},
		{"junit", func() error { return MergeJUnit(&bytes.Buffer{}, files.Anywhere(), []string{ax, bx}) }, "in both " + ax + " and " + bx},
		{"json twice", func() error { return MergeJSON(&bytes.Buffer{}, files.Anywhere(), []string{a, a}) }, "is twice in " + a},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.merge()
			if !errors.Is(err, ErrDuplicate) {
				t.Fatalf("error = %v, want ErrDuplicate", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, `"network" (seq/net.yaml)`) {
				t.Errorf("error does not name the sequence: %v", err)
			}
			if !strings.Contains(msg, tc.where) {
				t.Errorf("error does not say %q: %v", tc.where, err)
			}
		})
	}
}

// TestMergeNotReport checks that inputs that are not hilrun reports are
// refused with ErrNotReport and a reason, and that a missing file is not
// taken for one.
func TestMergeNotReport(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	jsonCases := []struct{ name, text, want string }{
		{"array", `[1]`, "not a JSON object"},
		{"no sequences", `{"passed": true}`, `no "sequences" list`},
		{"sequences not a list", `{"sequences": 3}`, "not a list"},
		{"sequence without a file", `{"sequences": [{"name": "x", "status": "passed", "duration_ms": 1, "counts": {}}]}`, "lacks"},
		{"negative duration", `{"sequences": [{"name": "x", "file": "x", "status": "passed", "duration_ms": -1, "counts": {}}]}`, "not a duration"},
		{"cut short", `{"sequences": [{"name": "x", "file": "x", "status": "passed", "duration_ms": 1, "counts": {}}`, "ends early"},
		{"trailing", `{"sequences": []} {}`, "more follows"},
		{"not json", `hello`, "invalid character"},
	}
	for _, tc := range jsonCases {
		t.Run("json "+tc.name, func(t *testing.T) {
			err := MergeJSON(&bytes.Buffer{}, files.Anywhere(), []string{write(tc.name+".json", tc.text)})
			if !errors.Is(err, ErrNotReport) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want ErrNotReport saying %q", err, tc.want)
			}
		})
	}
	junitCases := []struct{ name, text, want string }{
		{"other root", `<testsuite name="x" tests="0" failures="0" errors="0" id="0" time="0"></testsuite>`, "not <testsuites>"},
		{"counts disagree", `<testsuites><testsuite name="x" tests="2" failures="0" errors="0" id="0" time="0"><testcase name="a" classname="x"/></testsuite></testsuites>`, "do not match"},
		{"bad time", `<testsuites><testsuite name="x" tests="0" failures="0" errors="0" id="0" time="soon"></testsuite></testsuites>`, "not a duration"},
		{"broken", `<testsuites><testsuite name="x">`, "unexpected EOF"},
		{"stranger", `<testsuites><other/></testsuites>`, "holds a <other>"},
	}
	for _, tc := range junitCases {
		t.Run("junit "+tc.name, func(t *testing.T) {
			err := MergeJUnit(&bytes.Buffer{}, files.Anywhere(), []string{write(tc.name+".xml", tc.text)})
			if !errors.Is(err, ErrNotReport) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want ErrNotReport saying %q", err, tc.want)
			}
		})
	}
	err := MergeJSON(&bytes.Buffer{}, files.Anywhere(), []string{filepath.Join(dir, "missing.json")})
	if err == nil || errors.Is(err, ErrNotReport) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: error = %v, want one that says it does not exist", err)
	}
}

// TestReadSequences reads the durations a report holds, in order.
func TestReadSequences(t *testing.T) {
	dir := t.TempDir()
	js, _ := writeShard(t, dir, "all", fixture(), nil)
	heads, err := ReadSequences(files.Anywhere(), js)
	if err != nil {
		t.Fatal(err)
	}
	if len(heads) != 6 {
		t.Fatalf("got %d sequences, want 6", len(heads))
	}
	if h := heads[0]; h.Name != "boot check" || h.Key() != "seq/boot.yaml" || h.DurationMS != 1234.567 || h.Status != "passed" || h.Counts.Total != 12 {
		t.Errorf("first sequence = %+v", h)
	}
	if h := heads[3]; h.Status != "error" {
		t.Errorf("an interrupted sequence reads %q, want error", h.Status)
	}
}

// TestMergeShards checks what merge makes of the shards' marks: a missing
// shard is an IncompleteError naming it, after the merged report is
// written whole; shards of different plans, a shard with a report that is
// none, and one shard given twice are refused.
func TestMergeShards(t *testing.T) {
	all := fixture()
	dir := t.TempDir()
	shard := func(i, n int, plan string) *Shard { return &Shard{Index: i, Total: n, Sequences: len(all), Plan: plan} }
	s1, x1 := writeShard(t, dir, "s1", all[:2], shard(1, 3, "p"))
	s2, x2 := writeShard(t, dir, "s2", all[2:4], shard(2, 3, "p"))
	_, _ = writeShard(t, dir, "s3", all[4:], shard(3, 3, "p"))
	e4, x4 := writeShard(t, dir, "s4", nil, shard(4, 4, "p"))
	o2, _ := writeShard(t, dir, "o2", all[2:4], shard(2, 3, "other"))
	plain, _ := writeShard(t, dir, "plain", all[4:], nil)
	d2, _ := writeShard(t, dir, "d2", all[4:], shard(2, 3, "p"))

	for _, tc := range []struct {
		name  string
		merge func(io.Writer, files.Policy, []string) error
		paths []string
	}{
		{"json", MergeJSON, []string{s1, s2}},
		{"junit", MergeJUnit, []string{x1, x2}},
	} {
		t.Run(tc.name+" missing", func(t *testing.T) {
			var out bytes.Buffer
			err := tc.merge(&out, files.Anywhere(), tc.paths)
			var inc *IncompleteError
			if !errors.As(err, &inc) || inc.Have != 4 || inc.Want != 6 || !slices.Equal(inc.Missing, []string{"3/3"}) {
				t.Fatalf("error = %#v, want 4 of 6 sequences, shard 3/3 missing", err)
			}
			if !strings.Contains(err.Error(), "holds 4 of the 6 sequences the shards were cut from: shard 3/3 is missing") {
				t.Errorf("message: %v", err)
			}
			if !strings.Contains(out.String(), "seq/net.yaml") || strings.Contains(out.String(), "seq/setup.yaml") {
				t.Errorf("the merged report was not written whole:\n%s", out.String())
			}
		})
	}
	// An empty shard's JUnit report says no shard: it is no evidence
	// either way, and the count decides.
	var out bytes.Buffer
	if err := MergeJUnit(&out, files.Anywhere(), []string{x1, x4}); !errors.As(err, new(*IncompleteError)) {
		t.Errorf("with an empty JUnit report: %v, want incomplete", err)
	}
	if err := MergeJSON(&out, files.Anywhere(), []string{s1, e4}); !errors.Is(err, ErrShards) {
		t.Errorf("shards of 3 and 4: %v, want ErrShards", err)
	}

	for _, tc := range []struct {
		name  string
		paths []string
		want  error
		msg   string
	}{
		{"other plan", []string{s1, o2}, ErrShards, "plan p), " + o2 + " shard 2/3 of 6 (plan other): the shards must be cut from the same"},
		{"no shard", []string{s1, plain}, ErrShards, s1 + " is shard 1/3, " + plain + " no shard"},
		{"no shard first", []string{plain, s1}, ErrShards, s1 + " is shard 1/3, " + plain + " no shard"},
		{"shard twice", []string{s1, s2, d2}, ErrDuplicate, s2 + " and " + d2 + " are both shard 2/3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := MergeJSON(&bytes.Buffer{}, files.Anywhere(), tc.paths)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error = %v, want %v saying %q", err, tc.want, tc.msg)
			}
		})
	}
}
