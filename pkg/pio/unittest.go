// Unit tests (pio test) and their JSON report.

package pio

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
)

// TestSpec is a `pio test` run.
type TestSpec struct {
	ProjectDir string
	Env        string
	// Filter and Ignore are test name patterns (-f, -i).
	Filter, Ignore []string
	// UploadPort and TestPort are --upload-port and --test-port.
	UploadPort, TestPort string
	// WithoutUploading runs tests already on the target.
	WithoutUploading bool
}

// TestCase is one test case of a `pio test` report.
type TestCase struct {
	Name string `json:"name"`
	// Status is PASSED, FAILED, SKIPPED, WARNED or ERRORED.
	Status    string  `json:"status"`
	Message   string  `json:"message"`
	Stdout    string  `json:"stdout"`
	DurationS float64 `json:"duration"`
	File      string  `json:"file"`
	Line      int     `json:"line"`
}

// TestSuite is one test folder run on one environment.
type TestSuite struct {
	Env       string     `json:"env"`
	Name      string     `json:"name"`
	Status    string     `json:"status"`
	DurationS float64    `json:"duration"`
	Cases     []TestCase `json:"cases"`
}

// TestReport is PlatformIO's JSON test report.
type TestReport struct {
	DurationS float64     `json:"duration"`
	Cases     int         `json:"cases"`
	Failures  int         `json:"failures"`
	Errors    int         `json:"errors"`
	Skipped   int         `json:"skipped"`
	Suites    []TestSuite `json:"suites"`
}

// Passed reports whether every case passed or was skipped and every suite
// ran.
func (r *TestReport) Passed() bool {
	if r.Failures > 0 || r.Errors > 0 {
		return false
	}
	for _, s := range r.Suites {
		if s.Status == "FAILED" || s.Status == "ERRORED" {
			return false
		}
	}
	return true
}

type rawTestReport struct {
	Version    string  `json:"version"`
	Duration   float64 `json:"duration"`
	Cases      int     `json:"testcase_nums"`
	Errors     int     `json:"error_nums"`
	Failures   int     `json:"failure_nums"`
	Skipped    int     `json:"skipped_nums"`
	TestSuites []struct {
		Env      string  `json:"env_name"`
		Name     string  `json:"test_name"`
		Status   string  `json:"status"`
		Duration float64 `json:"duration"`
		Cases    []struct {
			Name     string  `json:"name"`
			Status   string  `json:"status"`
			Message  *string `json:"message"`
			Stdout   *string `json:"stdout"`
			Duration float64 `json:"duration"`
			Source   *struct {
				File string `json:"file"`
				Line int    `json:"line"`
			} `json:"source"`
		} `json:"test_cases"`
	} `json:"test_suites"`
}

// Test runs `pio test -d dir [-e env] ... --json-output`: it builds,
// uploads and runs the tests, and returns PlatformIO's report. Failing
// tests are a report, not an error: the error is for tests that could not
// run (no report).
func (c *Client) Test(ctx context.Context, spec TestSpec) (*TestReport, *Output, error) {
	if err := CheckProject(spec.ProjectDir, spec.Env); err != nil {
		return nil, nil, err
	}
	args := append([]string{"test"}, projectArgs(spec.ProjectDir, spec.Env)...)
	for _, f := range spec.Filter {
		args = append(args, "-f", f)
	}
	for _, f := range spec.Ignore {
		args = append(args, "-i", f)
	}
	if spec.UploadPort != "" {
		args = append(args, "--upload-port", spec.UploadPort)
	}
	if spec.TestPort != "" {
		args = append(args, "--test-port", spec.TestPort)
	}
	if spec.WithoutUploading {
		args = append(args, "--without-uploading")
	}
	args = append(args, "--json-output")
	out, err := c.run(ctx, "", args)
	if err != nil {
		return nil, nil, err
	}
	rep, perr := ParseTestReport([]byte(out.Text))
	if perr != nil {
		if !out.OK() {
			return nil, out, failed(out)
		}
		return nil, out, perr
	}
	return rep, out, nil
}

// ParseTestReport reads the JSON report `pio test --json-output` prints
// as the last line of its output, after the test log.
func ParseTestReport(text []byte) (*TestReport, error) {
	lines := strings.Split(strings.TrimRight(string(text), "\r\n \t"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(l, "{") {
			continue
		}
		var raw rawTestReport
		if err := json.Unmarshal([]byte(l), &raw); err != nil || raw.Version == "" {
			continue
		}
		rep := &TestReport{DurationS: raw.Duration, Cases: raw.Cases, Failures: raw.Failures, Errors: raw.Errors, Skipped: raw.Skipped, Suites: []TestSuite{}}
		for _, s := range raw.TestSuites {
			suite := TestSuite{Env: s.Env, Name: s.Name, Status: s.Status, DurationS: s.Duration, Cases: []TestCase{}}
			for _, tc := range s.Cases {
				c := TestCase{Name: tc.Name, Status: tc.Status, DurationS: tc.Duration}
				if tc.Message != nil {
					c.Message = *tc.Message
				}
				if tc.Stdout != nil {
					c.Stdout = *tc.Stdout
				}
				if tc.Source != nil {
					c.File, c.Line = tc.Source.File, tc.Source.Line
				}
				suite.Cases = append(suite.Cases, c)
			}
			rep.Suites = append(rep.Suites, suite)
		}
		return rep, nil
	}
	return nil, errors.New("pio test: no JSON report in its output")
}
