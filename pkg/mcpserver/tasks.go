package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// Task states.
const (
	taskRunning   = "running"
	taskDone      = "done"
	taskFailed    = "failed"
	taskCancelled = "cancelled"
)

const (
	// maxTasks bounds how many finished tasks stay readable.
	maxTasks = 50
	// taskLines is how many output lines task_status shows.
	taskLines = 20
	// taskLineBytes bounds one line task_status shows.
	taskLineBytes = 400
)

func taskLogURI(id string) string { return "hilrun://tasks/" + id + "/log" }

const taskLogTemplate = "hilrun://tasks/{task_id}/log"

// task is one build or upload, run by a tool call or in the background.
type task struct {
	id, kind string
	started  time.Time
	logPath  string

	mu     sync.Mutex
	state  string
	ended  time.Time
	result *buildResult
	// pio is the result of a PlatformIO verb.
	pio   *pioResult
	err   string
	lines []string
	// cancel stops a background task; nil for one a call runs.
	cancel context.CancelFunc
	// owner is the MCP session that started a background task: only it
	// may cancel the task, until it ends ("": anyone may).
	owner string
	// over is closed when the task ends.
	over chan struct{}
	// onLine, when set before the task runs, gets each output line too.
	onLine func(string)
}

// setCancel makes t a background task of session owner that cancel
// stops.
func (t *task) setCancel(cancel context.CancelFunc, owner string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cancel, t.owner = cancel, owner
}

// sessionEnded lets any session cancel the tasks of session id, which has
// ended.
func (ts *taskStore) sessionEnded(id string) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for _, t := range ts.tasks {
		t.mu.Lock()
		if t.owner == id {
			t.owner = ""
		}
		t.mu.Unlock()
	}
}

// stop cancels a running background task for session owner; false when t
// is not one. It refuses a task another live session started.
func (t *task) stop(owner string) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cancel == nil || t.state != taskRunning {
		return false, nil
	}
	if t.owner != "" && t.owner != owner {
		return false, fmt.Errorf("task %s belongs to session %s: only that session may cancel it (until it ends)", t.id, shortOwner(t.owner))
	}
	t.cancel()
	return true, nil
}

// addLine keeps the last taskLines lines the tool printed.
func (t *task) addLine(l string) {
	if len(l) > taskLineBytes {
		l = l[:taskLineBytes] + "…"
	}
	if t.onLine != nil {
		t.onLine(l)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == taskLines {
		copy(t.lines, t.lines[1:])
		t.lines = t.lines[:taskLines-1]
	}
	t.lines = append(t.lines, l)
}

func (t *task) finish(state string, r *buildResult, msg string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.state, t.result, t.err, t.ended = state, r, msg, time.Now()
	if r != nil {
		r.State = state
	}
	close(t.over)
}

func (t *task) finishPIO(state string, r *pioResult, msg string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.state, t.pio, t.err, t.ended = state, r, msg, time.Now()
	if r != nil {
		r.State = state
	}
	close(t.over)
}

// taskStore keeps the last maxTasks tasks, and every running one.
type taskStore struct {
	s     *Server
	mu    sync.Mutex
	next  int
	tasks []*task
}

// add starts a task of kind: its log file and its resource.
func (ts *taskStore) add(kind string) *task {
	ts.mu.Lock()
	ts.next++
	t := &task{id: "t" + strconv.Itoa(ts.next), kind: kind, started: time.Now(), state: taskRunning, over: make(chan struct{})}
	t.logPath = filepath.Join(ts.s.logDir, "tasks", t.id+".log")
	ts.tasks = append(ts.tasks, t)
	var evict []*task
	keep := ts.tasks[:0]
	over := len(ts.tasks) - maxTasks
	for _, old := range ts.tasks {
		if over > 0 && old.done() {
			evict = append(evict, old)
			over--
			continue
		}
		keep = append(keep, old)
	}
	ts.tasks = keep
	ts.mu.Unlock()
	for _, old := range evict {
		ts.s.mcp.DeleteResources(taskLogURI(old.id))
		os.Remove(old.logPath)
	}
	ts.s.mcp.AddResource(mcp.NewResource(taskLogURI(t.id), kind+" task "+t.id+" log",
		mcp.WithResourceDescription("the whole output of "+kind+" task "+t.id),
		mcp.WithMIMEType("text/plain")), ts.s.readResource)
	return t
}

func (t *task) done() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.state != taskRunning
}

func (ts *taskStore) find(id string) *task {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for _, t := range ts.tasks {
		if t.id == id {
			return t
		}
	}
	return nil
}

// --- task_status ---

type taskArgs struct {
	TaskID string `json:"task_id"`
}

type taskStatus struct {
	TaskID string `json:"task_id"`
	Kind   string `json:"kind"`
	// State is running, done (the tool ran; see result.ok), failed (it
	// could not run) or cancelled.
	State      string       `json:"state"`
	Started    string       `json:"started"`
	DurationMS float64      `json:"duration_ms"`
	Result     *buildResult `json:"result,omitempty"`
	// PIO is the result of a PlatformIO verb (check_project, run_tests...).
	PIO   *pioResult `json:"pio,omitempty"`
	Error string     `json:"error,omitempty"`
	// Progress is the last lines the tool printed.
	Progress    []string `json:"progress"`
	LogResource string   `json:"log_resource"`
}

func (s *Server) taskStatus(ctx context.Context, req mcp.CallToolRequest, a *taskArgs) (any, string, error) {
	if a.TaskID == "" {
		return nil, "", errors.New("task_id is required: the task_id a build or upload returned")
	}
	t := s.tasks.find(a.TaskID)
	if t == nil {
		return nil, "", fmt.Errorf("no task %q: only the last %d tasks are kept", a.TaskID, maxTasks)
	}
	t.mu.Lock()
	out := taskStatus{TaskID: t.id, Kind: t.kind, State: t.state, Started: t.started.Format(time.RFC3339Nano),
		Error: t.err, Progress: append([]string{}, t.lines...), LogResource: taskLogURI(t.id)}
	end := t.ended
	if t.state == taskRunning {
		end = time.Now()
	}
	out.DurationMS = ms(end.Sub(t.started))
	if t.result != nil {
		r := *t.result
		out.Result = &r
	}
	if t.pio != nil {
		r := *t.pio
		out.PIO = &r
	}
	t.mu.Unlock()
	var text string
	switch {
	case out.State == taskRunning:
		text = fmt.Sprintf("%s %s running for %s", t.kind, t.id, fmtDur(end.Sub(t.started)))
		if n := len(out.Progress); n > 0 {
			text += "\n" + strings.Join(out.Progress[max(0, n-5):], "\n")
		}
	case out.Result != nil && out.State == taskDone:
		text = formatBuild(out.Result)
	case out.PIO != nil && out.State == taskDone:
		text = formatPIO(out.PIO)
	default:
		text = fmt.Sprintf("%s %s %s: %s\nlog: %s", t.kind, t.id, out.State, out.Error, out.LogResource)
	}
	return out, text, nil
}

// durationMS turns milliseconds back into a duration.
func durationMS(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

type cancelResult struct {
	TaskID string `json:"task_id"`
	// State is the task's state after the call: cancelled, or how it had
	// ended already.
	State string `json:"state"`
}

func (s *Server) taskCancel(ctx context.Context, _ mcp.CallToolRequest, a *taskArgs) (any, string, error) {
	t := s.tasks.find(a.TaskID)
	if t == nil {
		return nil, "", fmt.Errorf("no task %q: only the last %d tasks are kept", a.TaskID, maxTasks)
	}
	stopped, err := t.stop(sessionOwner(ctx))
	if err != nil {
		return nil, "", err
	}
	if !stopped {
		t.mu.Lock()
		st := t.state
		t.mu.Unlock()
		return cancelResult{TaskID: t.id, State: st}, fmt.Sprintf("task %s is not running in the background (%s)", t.id, st), nil
	}
	// The task ends once its tool and what it started are gone.
	select {
	case <-t.over:
	case <-ctx.Done():
		return nil, "", ctx.Err()
	}
	t.mu.Lock()
	st := t.state
	t.mu.Unlock()
	return cancelResult{TaskID: t.id, State: st}, fmt.Sprintf("task %s %s", t.id, st), nil
}
