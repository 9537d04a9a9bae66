package cli_test

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jstemmer/go-junit-report/v2/junit"
)

// matrixSeq is a 2x2 matrix on the virtual board whose case
// baud=115200,fw=2.4.1 fails, so the cases after it must still run.
const matrixSeq = `name: boot
tags: [smoke]
matrix:
  baud: [9600, 115200]
  fw: ["2.4.1", "2.5.0"]
steps:
  - name: say the case
    send: echo case ${baud} ${fw}
    expect: case ${baud} ${fw}
  - name: the case passes
    assert: baud == 9600 || fw == "2.5.0"
`

// groupsSeq has tagged groups: -m and the quarantine list pick among them.
const groupsSeq = `name: groups
steps:
  - group: quick
    tags: [smoke]
    steps:
      - send: echo quick
        expect: quick
  - group: long
    tags: [slow]
    steps:
      - send: echo long
        expect: long
  - group: flaky
    tags: [smoke]
    steps:
      - send: echo flaky
        expect: flaky
`

const quarantineList = `- name: flaky
  reason: "hangs one run in ten, #42"
- name: boot[baud=9600,fw=2.5.0]
  reason: the 2.5.0 bootloader drops bytes at 9600
  benches: [sim]
- name: boot[baud=115200,fw=2.5.0]
  reason: only on the lab bench
  benches: [lab-2]
`

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// caseOutcome is one test case's status and message, as a report says.
type caseOutcome struct{ Status, Message string }

// TestMatrixAndQuarantineReachEveryReport runs a 2x2 matrix and tagged
// groups with a quarantine list and -m on the virtual board, and reads
// each case's outcome back from every report: console, JSON, JUnit, HTML
// and Allure.
func TestMatrixAndQuarantineReachEveryReport(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"seqs/boot.yaml":   matrixSeq,
		"seqs/groups.yaml": groupsSeq,
		"quarantine.yaml":  quarantineList,
	})
	code, out, errOut := hilrunIn(t, dir, "run", "--sim", "-m", "smoke or slow and not slow", "--quarantine", "quarantine.yaml",
		"--json", "out.json", "--junit", "out.xml", "--html", "out.html", "--allure", "allure", "seqs")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (one case fails)\n%s\n%s", code, out, errOut)
	}
	const (
		quarantined = "quarantined: the 2.5.0 bootloader drops bytes at 9600"
		flaky       = "quarantined: hangs one run in ten, #42"
		deselected  = `deselected by -m "smoke or slow and not slow"`
	)
	want := map[string]caseOutcome{
		"boot[baud=9600,fw=2.4.1]":   {"passed", ""},
		"boot[baud=9600,fw=2.5.0]":   {"skipped", quarantined},
		"boot[baud=115200,fw=2.4.1]": {"failed", "assert failed"},
		"boot[baud=115200,fw=2.5.0]": {"passed", ""},
		"quick":                      {"passed", ""},
		"long":                       {"skipped", deselected},
		"flaky":                      {"skipped", flaky},
	}
	for _, line := range []string{
		"▸ boot[baud=115200,fw=2.5.0]",
		"step 1    group   boot[baud=9600,fw=2.5.0]  0.0ms  " + quarantined,
		"step 1    group   long  0.0ms  " + deselected,
		"FAILED boot: 8 steps, 5 passed, 1 failed, 2 skipped",
	} {
		if !strings.Contains(out, line) {
			t.Errorf("the console lacks %q:\n%s", line, out)
		}
	}
	check := func(report string, got map[string]caseOutcome) {
		t.Helper()
		for name, w := range want {
			g, ok := got[name]
			if !ok || g.Status != w.Status || !strings.Contains(g.Message, w.Message) {
				t.Errorf("%s: case %s is %+v, want %+v (all: %v)", report, name, g, w, got)
			}
		}
	}
	check("JSON", jsonGroups(t, filepath.Join(dir, "out.json")))
	check("JUnit", junitCases(t, filepath.Join(dir, "out.xml")))
	check("HTML", htmlGroups(t, filepath.Join(dir, "out.html")))
	check("Allure", allureCases(t, filepath.Join(dir, "allure")))
}

// jsonGroups reads each group's outcome from a JSON report.
func jsonGroups(t *testing.T, path string) map[string]caseOutcome {
	t.Helper()
	var doc struct {
		Sequences []struct {
			Steps []struct{ Kind, Name, Group, Status, Message string }
		}
	}
	readJSON(t, path, &doc)
	got := map[string]caseOutcome{}
	failed := map[string]string{} // a group's first failing step says why
	for _, s := range doc.Sequences {
		for _, st := range s.Steps {
			switch {
			case st.Kind == "group":
				got[st.Name] = caseOutcome{st.Status, st.Message}
			case st.Status == "failed" && failed[st.Group] == "":
				failed[st.Group] = st.Message
			}
		}
	}
	for name, c := range got {
		if c.Message == "" {
			c.Message = failed[name]
			got[name] = c
		}
	}
	return got
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// junitCases reads each testcase's outcome, by its name less the index.
func junitCases(t *testing.T, path string) map[string]caseOutcome {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc junit.Testsuites
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	got := map[string]caseOutcome{}
	for _, s := range doc.Suites {
		for _, tc := range s.Testcases {
			_, name, _ := strings.Cut(tc.Name, " ")
			o := caseOutcome{Status: "passed"}
			switch {
			case tc.Failure != nil:
				o = caseOutcome{"failed", tc.Failure.Message}
			case tc.Error != nil:
				o = caseOutcome{"error", tc.Error.Message}
			case tc.Skipped != nil:
				o = caseOutcome{"skipped", tc.Skipped.Message}
			}
			got[name] = o
		}
	}
	return got
}

// htmlGroups reads each group's outcome from the data an HTML report
// embeds.
func htmlGroups(t *testing.T, path string) map[string]caseOutcome {
	t.Helper()
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data := []byte(htmlData(t, page))
	tmp := filepath.Join(t.TempDir(), "data.json")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return jsonGroups(t, tmp)
}

// allureCases reads each Allure result's outcome, by its name less the
// index.
func allureCases(t *testing.T, dir string) map[string]caseOutcome {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*-result.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Allure results in %s (%v)", dir, err)
	}
	got := map[string]caseOutcome{}
	for _, f := range files {
		var r struct {
			Name, Status  string
			StatusDetails struct{ Message string }
			Parameters    []struct{ Name, Value string }
		}
		readJSON(t, f, &r)
		_, name, _ := strings.Cut(r.Name, " ")
		name = strings.TrimPrefix(name, "group ")
		msg := r.StatusDetails.Message
		if i := slices.IndexFunc(r.Parameters, func(p struct{ Name, Value string }) bool { return p.Name == "message" }); i >= 0 && msg == "" {
			msg = r.Parameters[i].Value
		}
		got[name] = caseOutcome{r.Status, msg}
	}
	return got
}

func TestListShowsTagsQuarantineAndCases(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"seqs/boot.yaml":   matrixSeq,
		"seqs/groups.yaml": groupsSeq,
		"quarantine.yaml":  quarantineList,
	})
	code, out, errOut := hilrunIn(t, dir, "run", "--list", "--sim", "-m", "not slow", "--quarantine", "quarantine.yaml", "seqs")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	for _, line := range []string{
		"seqs/boot.yaml: boot (8 steps) tags: smoke groups: boot[baud=9600,fw=2.4.1], boot[baud=9600,fw=2.5.0], boot[baud=115200,fw=2.4.1], boot[baud=115200,fw=2.5.0]\n",
		"  boot[baud=9600,fw=2.5.0] skipped: quarantined: the 2.5.0 bootloader drops bytes at 9600\n",
		"seqs/groups.yaml: groups (3 steps) groups: quick, long, flaky\n",
		"  quick tags: smoke\n",
		"  long tags: slow; skipped: deselected by -m \"not slow\"\n",
		"  flaky tags: smoke; skipped: quarantined: hangs one run in ten, #42\n",
	} {
		if !strings.Contains(out, line) {
			t.Errorf("--list lacks %q:\n%s", line, out)
		}
	}
	// The entry for another bench does not apply here.
	if strings.Contains(out, "only on the lab bench") {
		t.Errorf("--list applies an entry for bench lab-2 to the virtual board:\n%s", out)
	}
}

func TestKRunsOneMatrixCase(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"boot.yaml": matrixSeq, "other.yaml": groupsSeq})
	code, out, errOut := hilrunIn(t, dir, "run", "--sim", "-k", "boot[baud=115200,fw=2.5.0]", "--json", "out.json", "boot.yaml", "other.yaml")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	got := jsonGroups(t, filepath.Join(dir, "out.json"))
	ran := 0
	for name, c := range got {
		if c.Status == "passed" {
			ran++
			if name != "boot[baud=115200,fw=2.5.0]" {
				t.Errorf("%s ran", name)
			}
		} else if !strings.HasPrefix(c.Message, "deselected by -k") {
			t.Errorf("%s: %+v, want deselected by -k", name, c)
		}
	}
	if ran != 1 || len(got) != 4 {
		t.Errorf("%d cases ran of %d reported, want 1 of the 4 cases of boot only: %v", ran, len(got), got)
	}
}

func TestSelectionInputErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		args  []string
		want  string
	}{
		{"a bad -m names the column", map[string]string{"s.yaml": matrixSeq}, []string{"-m", "smoke and"}, `-m:1:10: the expression ends too early: want a tag, not or (, in "smoke and"`},
		{"-m that selects nothing", map[string]string{"s.yaml": matrixSeq}, []string{"-m", "nightly"}, `-m "nightly" selects none of the 1 sequence`},
		{"a bad quarantine list names the line", map[string]string{"s.yaml": matrixSeq, "q.yaml": "- name: boot\n  reason: x\n  bench: [a]\n"}, []string{"--quarantine", "q.yaml"}, `q.yaml:3:3: unknown key "bench" in a quarantine entry`},
		{"a missing quarantine list", map[string]string{"s.yaml": matrixSeq}, []string{"--quarantine", "nope.yaml"}, "--quarantine nope.yaml: read the quarantine list: open nope.yaml"},
		{"a matrix key that is a variable", map[string]string{"s.yaml": "vars: {baud: 1}\n" + matrixSeq}, nil, "s.yaml:5:3: matrix key baud is also a variable under vars: (line 1)"},
		{"a matrix key given with --var", map[string]string{"s.yaml": matrixSeq}, []string{"--var", "fw=1"}, "s.yaml:5:3: matrix key fw is also given with --var fw"},
		{"a bad tag", map[string]string{"s.yaml": "tags: [not]\nsteps: [{log: x}]\n"}, nil, `s.yaml:1:8: tag "not" must be letters`},
		{"an exclude of an unknown key", map[string]string{"s.yaml": "matrix: {a: [1, 2], exclude: [{b: 1}]}\nsteps: [{log: x}]\n"}, nil, "s.yaml:1:32: matrix exclude: b is not a key of the matrix"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, tt.files)
			args := append([]string{"run", "--sim"}, tt.args...)
			code, _, errOut := hilrunIn(t, dir, append(args, "s.yaml")...)
			if code != 2 || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and %q", code, errOut, tt.want)
			}
		})
	}
}

func TestShardsKeepAMatrixTogether(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"seqs/a-boot.yaml": matrixSeq, "seqs/b-groups.yaml": groupsSeq})
	seen := map[string]int{}
	for _, shard := range []string{"1/2", "2/2"} {
		_, out, errOut := hilrunIn(t, dir, "run", "--list", "--shard", shard, "seqs")
		if !strings.Contains(out, "1 sequence") {
			t.Fatalf("--shard %s: want one file per shard:\n%s\n%s", shard, out, errOut)
		}
		if strings.Contains(out, "boot[") {
			seen[shard] = strings.Count(out, "boot[")
		}
	}
	if len(seen) != 1 {
		t.Errorf("the matrix's cases are in shards %v, want all in one", seen)
	}
}
