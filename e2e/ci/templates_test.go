// Package ci checks hilrun's CI templates (docs/ci) with the linters their
// CI systems' users run: actionlint for the GitHub Actions workflow, and
// gitlab-ci-local's --preview, which merges an included file into a
// project's pipeline the way GitLab does and validates the result against
// GitLab's schema. internal/cli's ci_docs_test runs the templates' hilrun
// commands; this package checks that they paste.
//
// actionlint comes through the Go module proxy (`go run`, not in go.mod);
// gitlab-ci-local from this folder's node_modules (`npm ci --prefix
// e2e/ci`). Without them the tests skip, and under CI=true they fail.
package ci

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/testenv"
)

// actionlintModule is the actionlint release the workflow is checked with.
const actionlintModule = "github.com/rhysd/actionlint/cmd/actionlint@v1.7.12"

func repoFile(t *testing.T, rel string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", rel))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// run runs name with args in dir and returns its combined output and exit
// code; a program that could not start ends the test.
func run(t *testing.T, dir string, name string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	code := cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out), code
}

// TestGitHubWorkflowLints runs actionlint on the workflow with the
// configuration beside it, which names the bench hosts' runner labels;
// without it actionlint refuses those labels, which shows it read them.
func TestGitHubWorkflowLints(t *testing.T) {
	gobin := testenv.NeedTool(t, "go", "https://go.dev/dl")
	dir := t.TempDir()
	if out, code := run(t, dir, gobin, "run", actionlintModule, "-version"); code != 0 {
		testenv.Missing(t, "actionlint could not be built through the Go module proxy: %s", out)
	}
	workflow := repoFile(t, "docs/ci/github-hil.yml")
	config := repoFile(t, "docs/ci/actionlint.yaml")
	out, code := run(t, dir, gobin, "run", actionlintModule, "-config-file", config, workflow)
	if code != 0 {
		t.Errorf("actionlint -config-file docs/ci/actionlint.yaml docs/ci/github-hil.yml exited %d:\n%s", code, out)
	}
	out, code = run(t, dir, gobin, "run", actionlintModule, "-config-file", os.DevNull, workflow)
	if code == 0 || !strings.Contains(out, `"hil-bench" is unknown`) {
		t.Errorf("without its configuration, actionlint should refuse the runner label hil-bench; exit %d:\n%s", code, out)
	}
}

// TestGitLabTemplatePreviews includes the GitLab template in projects as
// teams have them, one with GitLab's default stages and one that lists its
// own, and checks that gitlab-ci-local merges and validates each pipeline,
// with the template's jobs in stages the project has.
func TestGitLabTemplatePreviews(t *testing.T) {
	testenv.NeedTool(t, "node", "apt-get install nodejs npm")
	glcl, err := filepath.Abs(filepath.Join("node_modules", ".bin", "gitlab-ci-local"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(glcl); err != nil {
		testenv.Missing(t, "e2e/ci/node_modules is missing: run `npm ci --prefix e2e/ci` from the repository root")
	}
	git := testenv.NeedTool(t, "git", "apt-get install git")
	template, err := os.ReadFile(repoFile(t, "docs/ci/gitlab-hil.yml"))
	if err != nil {
		t.Fatal(err)
	}
	projects := []struct {
		name, pipeline string
	}{
		{"default stages", "include:\n  - local: gitlab-hil.yml\n"},
		{"own stages", "stages: [build, test, deploy]\ninclude:\n  - local: gitlab-hil.yml\nbuild:\n  stage: build\n  script: [make]\n"},
	}
	for _, p := range projects {
		t.Run(p.name, func(t *testing.T) {
			dir := t.TempDir()
			files := map[string]string{"gitlab-hil.yml": string(template), ".gitlab-ci.yml": p.pipeline}
			for name, data := range files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			// gitlab-ci-local reads the project's commit.
			for _, args := range [][]string{
				{"init", "-q"},
				{"add", "-A"},
				{"-c", "user.name=hilrun", "-c", "user.email=hilrun@localhost", "commit", "-q", "-m", "pipeline"},
			} {
				if out, code := run(t, dir, git, args...); code != 0 {
					t.Fatalf("git %s: %s", strings.Join(args, " "), out)
				}
			}
			out, code := run(t, dir, glcl, "--preview")
			if code != 0 {
				t.Fatalf("gitlab-ci-local --preview exited %d:\n%s", code, out)
			}
			for _, want := range []string{"\nhil:\n  stage: test\n", "\nhil-report:\n  stage: .post\n", "reports:\n      junit: junit.xml"} {
				if !strings.Contains(out, want) {
					t.Errorf("the merged pipeline lacks %q:\n%s", want, out)
				}
			}
		})
	}
}
