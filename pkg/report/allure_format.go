package report

import (
	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
)

// Allure's result format (allure-results), as its CLI reads it.
type allureResult struct {
	UUID          string            `json:"uuid"`
	HistoryID     string            `json:"historyId"`
	TestCaseID    string            `json:"testCaseId"`
	FullName      string            `json:"fullName"`
	Name          string            `json:"name"`
	Description   string            `json:"description,omitempty"`
	Status        string            `json:"status"`
	StatusDetails *allureDetails    `json:"statusDetails,omitempty"`
	Stage         string            `json:"stage"`
	Start         int64             `json:"start"`
	Stop          int64             `json:"stop"`
	Labels        []allureLabel     `json:"labels"`
	Parameters    []allureParameter `json:"parameters,omitempty"`
	Steps         []*allureStep     `json:"steps"`
	Attachments   []allureAttach    `json:"attachments"`

	// attempt is the attempt of the sequence or group with retries the
	// result is of, 0 for none: results of one test case differ by it.
	attempt int
	// tags are the test case's tags, each a "tag" label.
	tags []string
}

type allureDetails struct {
	Message string `json:"message,omitempty"`
	Trace   string `json:"trace,omitempty"`
	// Flaky is Allure's mark of a test that passed after failing.
	Flaky bool `json:"flaky,omitempty"`
}

type allureLabel struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type allureParameter struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type allureStep struct {
	Name          string            `json:"name"`
	Status        string            `json:"status"`
	StatusDetails *allureDetails    `json:"statusDetails,omitempty"`
	Stage         string            `json:"stage"`
	Start         int64             `json:"start"`
	Stop          int64             `json:"stop"`
	Parameters    []allureParameter `json:"parameters,omitempty"`
	Steps         []*allureStep     `json:"steps"`
	Attachments   []allureAttach    `json:"attachments"`

	path string
	// attempt is the attempt the step ran in (results.Step.Attempt);
	// attempts are a top-level group's, when it has retries; nested says
	// a container took the step.
	attempt  int
	attempts []results.Attempt
	nested   bool
	// branches are a parallel step's branches, in the order written.
	branches []string
	// tags are a group's tags (results.Step.Tags).
	tags []string
}

type allureAttach struct {
	Name   string `json:"name"`
	Source string `json:"source"`
	Type   string `json:"type"`
}

// allureStatus is Allure's status for s: error and interrupted are
// broken.
func allureStatus(s runner.Status) string {
	switch s {
	case runner.Passed:
		return "passed"
	case runner.Failed:
		return "failed"
	case runner.Skipped:
		return "skipped"
	}
	return "broken"
}
