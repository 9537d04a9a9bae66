package cli_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/hilrun/hilrun/internal/cli"
)

// The fleets docs/ci.md documents, in docs/ci, are run here as their CI
// systems would run them: each shard job's hilrun commands in a fresh
// checkout with the matrix values filled in, the artifacts they upload
// handed to the merge job, then its hilrun report merge. The virtual board
// stands in for the bench: a hilrun on PATH adds --sim and drops --bench.
// The merged reports must hold what one run of the whole suite does.

// ciFleet prepares what a CI run of the documented fleets needs: the
// checkout (the suite under sequences/, ci/hil-durations.json from a run
// of it), the facts of that single run, and a PATH whose hilrun runs on
// the virtual board and logs its arguments to the returned file.
func ciFleet(t *testing.T) (checkout, want, pathEnv, calls string) {
	t.Helper()
	real, err := exec.LookPath("hilrun") // the test binary, as testscript put it on PATH
	if err != nil {
		t.Fatalf("hilrun is not on PATH: %v", err)
	}
	checkout = t.TempDir()
	shardSuite(t, checkout)
	single := t.TempDir()
	shardSuite(t, single)
	code, _, errOut := hilrunIn(t, single, "run", "--sim", "--json", "all.json", "--junit", "all.xml", "sequences")
	if code != cli.ExitInfra {
		t.Fatalf("the single run exited %d, want 3: %s", code, errOut)
	}
	want = reportFacts(t, filepath.Join(single, "all.json"), filepath.Join(single, "all.xml"))
	copyTree(t, filepath.Join(single, "all.json"), filepath.Join(checkout, "ci", "hil-durations.json"))

	bin := t.TempDir()
	calls = filepath.Join(bin, "calls")
	wrapper := fmt.Sprintf(`#!/usr/bin/env bash
echo "$*" >> %q
if [ "$1" = run ]; then
  shift
  a=()
  while [ $# -gt 0 ]; do
    case "$1" in
      --bench) shift 2; continue ;;
      --bench=*) shift; continue ;;
    esac
    a+=("$1"); shift
  done
  exec %q run --sim "${a[@]}"
fi
exec %q "$@"
`, calls, real, real)
	if err := os.WriteFile(filepath.Join(bin, "hilrun"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	return checkout, want, bin + string(os.PathListSeparator) + os.Getenv("PATH"), calls
}

// copyTree copies the file or folder from to to.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		t.Fatalf("copy %s: %v", from, err)
	}
}

// runScript runs a job's script with bash as the CI system would (-e,
// pipefail) in dir, and returns its exit code.
func runScript(t *testing.T, dir, script, pathEnv string, env ...string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), append([]string{"PATH=" + pathEnv, "CI=true"}, env...)...)
	out, err := cmd.CombinedOutput()
	code := cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		t.Fatalf("run %q: %v\n%s", script, err, out)
	}
	t.Logf("$ %s\nexit %d\n%s", script, code, tail(string(out), 12))
	return code
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// usesHilrun reports whether a script runs hilrun's shard or merge
// commands (installing hilrun is left to the CI system).
func usesHilrun(script string) bool {
	return strings.Contains(script, "hilrun run ") || strings.Contains(script, "hilrun report merge ")
}

// checkShardExit fails on an exit code a shard must not have: the suite
// has failing sequences, so 1 and 3 are expected, 2 never.
func checkShardExit(t *testing.T, what string, code int) {
	t.Helper()
	if code != 0 && code != cli.ExitFailed && code != cli.ExitInfra {
		t.Fatalf("%s exited %d", what, code)
	}
}

// checkCalls checks that the shard commands and the merge ran.
func checkCalls(t *testing.T, calls string, shards int) {
	t.Helper()
	data, err := os.ReadFile(calls)
	if err != nil {
		t.Fatal(err)
	}
	var runs, merges int
	for _, l := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(l, "run "):
			runs++
			if !strings.Contains(l, "--shard ") || !strings.Contains(l, "--durations ci/hil-durations.json") {
				t.Errorf("a shard ran without --shard or --durations: %s", l)
			}
		case strings.HasPrefix(l, "report merge "):
			merges++
		}
	}
	if runs != shards || merges != 1 {
		t.Errorf("hilrun ran %d shards and %d merges, want %d and 1:\n%s", runs, merges, shards, data)
	}
}

type ghWorkflow struct {
	Env  map[string]string `yaml:"env"`
	Jobs map[string]ghJob  `yaml:"jobs"`
}

type ghJob struct {
	RunsOn   any    `yaml:"runs-on"`
	Needs    any    `yaml:"needs"`
	If       string `yaml:"if"`
	Strategy struct {
		FailFast *bool            `yaml:"fail-fast"`
		Matrix   map[string][]any `yaml:"matrix"`
	} `yaml:"strategy"`
	Steps []struct {
		Name string            `yaml:"name"`
		If   string            `yaml:"if"`
		Uses string            `yaml:"uses"`
		Run  string            `yaml:"run"`
		With map[string]string `yaml:"with"`
	} `yaml:"steps"`
}

// TestGitHubWorkflowDoc runs docs/ci/github-hil.yml.
func TestGitHubWorkflowDoc(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite five times")
	}
	data, err := os.ReadFile("../../docs/ci/github-hil.yml")
	if err != nil {
		t.Fatal(err)
	}
	var wf ghWorkflow
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatalf("docs/ci/github-hil.yml: %v", err)
	}
	var shardJob, mergeJob string
	for name, job := range wf.Jobs {
		for _, st := range job.Steps {
			switch {
			case strings.Contains(st.Run, "hilrun run "):
				shardJob = name
			case strings.Contains(st.Run, "hilrun report merge "):
				mergeJob = name
			}
		}
	}
	if shardJob == "" || mergeJob == "" {
		t.Fatalf("the workflow has no job running hilrun run (%q) or hilrun report merge (%q)", shardJob, mergeJob)
	}
	sj, mj := wf.Jobs[shardJob], wf.Jobs[mergeJob]
	if labels := fmt.Sprint(sj.RunsOn); !strings.Contains(labels, "self-hosted") || !strings.Contains(labels, "hil-bench") {
		t.Errorf("the shard job runs on %v, want self-hosted bench labels", sj.RunsOn)
	}
	if sj.Strategy.FailFast == nil || *sj.Strategy.FailFast {
		t.Errorf("the shard job's matrix must not fail fast: a failing shard would cancel the others' reports")
	}
	if fmt.Sprint(mj.Needs) != shardJob || mj.If != "always()" {
		t.Errorf("the merge job needs %v if %q; want it to need %s and run always()", mj.Needs, mj.If, shardJob)
	}
	shards := sj.Strategy.Matrix["shard"]
	if len(sj.Strategy.Matrix) != 1 || len(shards) < 2 {
		t.Fatalf("the matrix is %v, want one key, shard, with the shards' numbers", sj.Strategy.Matrix)
	}

	checkout, want, pathEnv, calls := ciFleet(t)
	var check string
	for _, st := range sj.Steps {
		if strings.Contains(st.Run, "hilrun version") {
			check = st.Run
		}
	}
	checkPinned(t, "the workflow", wf.Env["HILRUN_VERSION"], check, pathEnv)
	for _, st := range mj.Steps {
		if strings.Contains(st.Run, "go install") && !strings.Contains(st.Run, "@$HILRUN_VERSION") {
			t.Errorf("the merge job installs %q, want the pinned @$HILRUN_VERSION", st.Run)
		}
	}
	artifacts := map[string]string{} // name → folder
	expand := func(s string, shard any) string {
		s = strings.ReplaceAll(s, "${{ matrix.shard }}", fmt.Sprint(shard))
		s = strings.ReplaceAll(s, "${{ strategy.job-total }}", fmt.Sprint(len(shards)))
		if strings.Contains(s, "${{") {
			t.Fatalf("the test cannot fill in an expression in %q", s)
		}
		return s
	}
	for _, shard := range shards {
		dir := t.TempDir()
		copyTree(t, checkout, dir)
		for _, st := range sj.Steps {
			switch {
			case usesHilrun(st.Run):
				checkShardExit(t, "shard "+fmt.Sprint(shard), runScript(t, dir, expand(st.Run, shard), pathEnv))
			case strings.HasPrefix(st.Uses, "actions/upload-artifact@"):
				if st.If != "always()" {
					t.Errorf("the shard job uploads its reports if %q, want always(): a failing shard's report is the one that matters", st.If)
				}
				name := expand(st.With["name"], shard)
				store := t.TempDir()
				copyTree(t, filepath.Join(dir, st.With["path"]), store)
				artifacts[name] = store
			}
		}
	}
	if len(artifacts) != len(shards) {
		t.Fatalf("the shards uploaded %d artifacts, want one each: %v", len(artifacts), artifacts)
	}

	dir := t.TempDir()
	merged := false
	for _, st := range mj.Steps {
		switch {
		case strings.HasPrefix(st.Uses, "actions/download-artifact@"):
			// With a pattern and no merge-multiple, each artifact lands
			// in a folder of its name under path.
			for name, store := range artifacts {
				if ok, _ := path.Match(st.With["pattern"], name); ok {
					copyTree(t, store, filepath.Join(dir, st.With["path"], name))
				}
			}
		case usesHilrun(st.Run):
			if code := runScript(t, dir, st.Run, pathEnv); code != 0 {
				t.Fatalf("the merge exited %d", code)
			}
			merged = true
		}
	}
	if !merged {
		t.Fatal("the merge job ran no hilrun report merge")
	}
	checkCalls(t, calls, len(shards))
	if got := reportFacts(t, filepath.Join(dir, "report.json"), filepath.Join(dir, "junit.xml")); got != want {
		t.Errorf("the merged reports differ from the single run's:\n%s", factsDiff(got, want))
	}
}

type glJob struct {
	Stage        string   `yaml:"stage"`
	Image        string   `yaml:"image"`
	Tags         []string `yaml:"tags"`
	Parallel     int      `yaml:"parallel"`
	When         string   `yaml:"when"`
	Needs        []any    `yaml:"needs"`
	BeforeScript []string `yaml:"before_script"`
	Script       []string `yaml:"script"`
	Artifacts    struct {
		When  string   `yaml:"when"`
		Paths []string `yaml:"paths"`
	} `yaml:"artifacts"`
}

// TestGitLabPipelineDoc runs docs/ci/gitlab-hil.yml.
func TestGitLabPipelineDoc(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite five times")
	}
	data, err := os.ReadFile("../../docs/ci/gitlab-hil.yml")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("docs/ci/gitlab-hil.yml: %v", err)
	}
	jobs := map[string]glJob{}
	for name, node := range doc {
		if name == "stages" {
			t.Errorf("the pipeline declares stages:, which replace the stages of the project that includes it")
		}
		if name == "variables" || name == "default" || strings.HasPrefix(name, ".") {
			continue
		}
		var j glJob
		if err := node.Decode(&j); err != nil {
			t.Fatalf("job %s: %v", name, err)
		}
		jobs[name] = j
	}
	var shardJob, mergeJob string
	for name, j := range jobs {
		script := strings.Join(j.Script, "\n")
		switch {
		case strings.Contains(script, "hilrun run "):
			shardJob = name
		case strings.Contains(script, "hilrun report merge "):
			mergeJob = name
		}
	}
	if shardJob == "" || mergeJob == "" {
		t.Fatalf("the pipeline has no job running hilrun run (%q) or hilrun report merge (%q)", shardJob, mergeJob)
	}
	sj, mj := jobs[shardJob], jobs[mergeJob]
	if sj.Parallel < 2 || !slices.Contains(sj.Tags, "hil-bench") {
		t.Errorf("the shard job has parallel: %d and tags %v, want parallel shards on bench tags", sj.Parallel, sj.Tags)
	}
	if sj.Artifacts.When != "always" || mj.When != "always" {
		t.Errorf("artifacts when %q, merge job when %q: want both always, so a failing shard is reported", sj.Artifacts.When, mj.When)
	}
	if !strings.Contains(fmt.Sprint(mj.Needs), shardJob) {
		t.Errorf("the merge job needs %v, want %s", mj.Needs, shardJob)
	}

	var vars struct {
		Variables map[string]string `yaml:"variables"`
	}
	if err := yaml.Unmarshal(data, &vars); err != nil {
		t.Fatal(err)
	}
	checkout, want, pathEnv, calls := ciFleet(t)
	checkPinned(t, "the pipeline", vars.Variables["HILRUN_VERSION"], strings.Join(sj.BeforeScript, "\n"), pathEnv)
	if install := strings.Join(mj.BeforeScript, "\n"); !strings.Contains(install, "@$HILRUN_VERSION") {
		t.Errorf("the merge job installs hilrun with %q, want the pinned @$HILRUN_VERSION", install)
	}
	if strings.HasSuffix(mj.Image, ":latest") {
		t.Errorf("the merge job's image is %s: a new Go release could change the merge between two runs", mj.Image)
	}
	mergeDir := t.TempDir()
	for i := 1; i <= sj.Parallel; i++ {
		dir := t.TempDir()
		copyTree(t, checkout, dir)
		env := []string{fmt.Sprintf("CI_NODE_INDEX=%d", i), fmt.Sprintf("CI_NODE_TOTAL=%d", sj.Parallel)}
		checkShardExit(t, fmt.Sprintf("shard %d", i), runScript(t, dir, strings.Join(sj.Script, "\n"), pathEnv, env...))
		// GitLab extracts every needed job's artifacts at their paths
		// in the later job's checkout.
		for _, p := range sj.Artifacts.Paths {
			copyTree(t, filepath.Join(dir, p), filepath.Join(mergeDir, p))
		}
	}
	var script []string
	for _, l := range mj.Script {
		if usesHilrun(l) {
			script = append(script, l)
		}
	}
	if code := runScript(t, mergeDir, strings.Join(script, "\n"), pathEnv); code != 0 {
		t.Fatalf("the merge exited %d", code)
	}
	checkCalls(t, calls, sj.Parallel)
	if got := reportFacts(t, filepath.Join(mergeDir, "report.json"), filepath.Join(mergeDir, "junit.xml")); got != want {
		t.Errorf("the merged reports differ from the single run's:\n%s", factsDiff(got, want))
	}
}

// checkPinned checks the bench hosts' version check of a template: it
// pins a version, passes on a host with that version, and stops a host
// with another one before it runs anything.
func checkPinned(t *testing.T, what, pinned, check, pathEnv string) {
	t.Helper()
	if pinned == "" || check == "" {
		t.Fatalf("%s pins HILRUN_VERSION %q and checks it with %q; want both, so bench hosts and the merge run one release", what, pinned, check)
	}
	dir := t.TempDir()
	if code := runScript(t, dir, check, pathEnv, "HILRUN_VERSION="+cli.Version()); code != 0 {
		t.Errorf("%s: the version check failed on a host with the pinned version (exit %d)", what, code)
	}
	if code := runScript(t, dir, check, pathEnv, "HILRUN_VERSION=v0.0.0-another"); code == 0 {
		t.Errorf("%s: the version check passed on a host with another version", what)
	}
}
