package mcpserver

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/report"
	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
)

// Resource URIs.
const (
	runReportTemplate  = "hilrun://runs/{run_id}/report.json"
	runHTMLTemplate    = "hilrun://runs/{run_id}/report.html"
	runConsoleTemplate = "hilrun://runs/{run_id}/console/{name}"
	connLogTemplate    = "hilrun://connections/{id}/log"
	runBuildTemplate   = "hilrun://runs/{run_id}/build/{name}"
	runFileTemplate    = "hilrun://runs/{run_id}/files/{name}"
)

// artifactDir is the folder of a run's pictures and host command output.
const artifactDir = "files"

func runArtifactURI(id, file string) string {
	return "hilrun://runs/" + id + "/" + artifactDir + "/" + file
}

func runReportURI(id string) string        { return "hilrun://runs/" + id + "/report.json" }
func runHTMLURI(id string) string          { return "hilrun://runs/" + id + "/report.html" }
func runConsoleURI(id, file string) string { return "hilrun://runs/" + id + "/console/" + file }
func connLogURI(id string) string          { return "hilrun://connections/" + id + "/log" }
func runBuildURI(id, file string) string   { return "hilrun://runs/" + id + "/build/" + file }

// runRecord is one finished or running sequence run: its folder holds
// report.json and NAME.log per console.
type runRecord struct {
	id   string
	name string
	dir  string
	uris []string
	// done is when the run ended, for MaxRunAge.
	done time.Time
	// events is the run's event file; report.json is written from it
	// once, when the report resource is first read.
	events     string
	reportOnce sync.Once
	reportErr  error
	// version goes into the HTML report, written like report.json when
	// first read.
	version  string
	htmlOnce sync.Once
	htmlErr  error
}

// htmlPath writes the run's HTML report from its event file the first
// time it is asked for, and returns its path.
func (r *runRecord) htmlPath() (string, error) {
	p := filepath.Join(r.dir, "report.html")
	r.htmlOnce.Do(func() {
		if err := writeHTMLReport(p, r.events, r.version); err != nil {
			r.htmlErr = fmt.Errorf("write the HTML report of run %s: %w", r.id, err)
		}
	})
	return p, r.htmlErr
}

// reportPath writes the run's JSON report from its event file the first
// time it is asked for, and returns its path.
func (r *runRecord) reportPath() (string, error) {
	p := filepath.Join(r.dir, "report.json")
	r.reportOnce.Do(func() {
		if err := writeReport(p, r.events); err != nil {
			r.reportErr = fmt.Errorf("write the report of run %s: %w", r.id, err)
		}
	})
	return p, r.reportErr
}

// runStore keeps the last MaxRuns runs, and those younger than MaxRunAge,
// readable.
type runStore struct {
	s    *Server
	mu   sync.Mutex
	next int
	runs []*runRecord
}

func newRunStore(s *Server) *runStore { return &runStore{s: s} }

func (rs *runStore) start(name string) *runRecord {
	rs.mu.Lock()
	rs.next++
	id := "r" + strconv.Itoa(rs.next)
	rs.mu.Unlock()
	dir := filepath.Join(rs.s.logDir, "runs", id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		rs.s.logf("create %s: %v", dir, err)
	}
	return &runRecord{id: id, name: name, dir: dir}
}

// finish makes the run's result from the steps collected while it ran,
// registers its resources and evicts the oldest runs beyond the bound. The
// JSON report is written from the event file when it is first read.
func (rs *runStore) finish(r *runRecord, res *runner.SequenceResult, events string, steps *resultSteps, pictures []string) *sequenceResult {
	r.events = events
	out := &sequenceResult{
		RunID: r.id, Name: res.Name, Passed: res.Status == runner.Passed, Status: string(res.Status),
		DurationMS: ms(res.Duration), Error: res.Error,
		LogResources: []string{}, ReportResource: runReportURI(r.id),
		Flaky: res.Flaky,
	}
	for i := range res.Attempts {
		out.Attempts = append(out.Attempts, results.AttemptFrom(&res.Attempts[i]))
	}
	steps.fill(out)
	srv := rs.s.mcp
	var resources []server.ServerResource
	add := func(u, title, desc, mime string) {
		r.uris = append(r.uris, u)
		resources = append(resources, server.ServerResource{
			Resource: mcp.NewResource(u, title, mcp.WithResourceDescription(desc), mcp.WithMIMEType(mime)),
			Handler:  rs.s.readResource,
		})
	}
	add(runReportURI(r.id), "run "+r.id+" report ("+res.Name+")",
		"JSON report of run "+r.id+", sequence "+res.Name+": "+string(res.Status), "application/json")
	r.version = rs.s.cfg.Version
	add(runHTMLURI(r.id), "run "+r.id+" HTML report ("+res.Name+")",
		"the self-contained HTML report of run "+r.id+" (steps, console waterfall, timeline, plots, pictures), as hilrun run --html writes it", "text/html")
	// Every .log file of the run is a resource: the consoles' in its
	// folder, the build and upload tools' in its build folder.
	addLogs := func(dir string, uri func(id, file string) string, title func(name string) string, desc func(name string) string) {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".log") {
				continue
			}
			u := uri(r.id, e.Name())
			name := strings.TrimSuffix(e.Name(), ".log")
			out.LogResources = append(out.LogResources, u)
			add(u, title(name), desc(name), "text/plain")
		}
	}
	addLogs(r.dir, runConsoleURI,
		func(name string) string { return "run " + r.id + " console " + name },
		func(name string) string { return "the exact bytes console " + name + " sent during run " + r.id })
	addLogs(filepath.Join(r.dir, buildDir), runBuildURI,
		func(name string) string { return "run " + r.id + " " + name },
		func(string) string { return "the whole output of a build or upload tool during run " + r.id })
	addLogs(filepath.Join(r.dir, artifactDir), runArtifactURI,
		func(name string) string { return "run " + r.id + " " + name },
		func(string) string {
			return "the whole output of a host command (exec or power step) during run " + r.id
		})
	// Pictures are resources too, so that a client over HTTP can read
	// them; the result names them by URI.
	filesDir := filepath.Join(r.dir, artifactDir)
	for _, p := range pictures {
		if filepath.Dir(p) != filesDir {
			continue
		}
		u := runArtifactURI(r.id, filepath.Base(p))
		out.Pictures = append(out.Pictures, u)
		out.picturePaths = append(out.picturePaths, p)
		add(u, "run "+r.id+" picture "+filepath.Base(p), "a picture a camera step took during run "+r.id, "image/png")
	}
	srv.AddResources(resources...)

	rs.mu.Lock()
	r.done = time.Now()
	rs.runs = append(rs.runs, r)
	rs.mu.Unlock()
	rs.evict(time.Now())
	return out
}

// evict forgets the oldest runs beyond MaxRuns and the runs that ended
// more than MaxRunAge before now, with their resources and files.
func (rs *runStore) evict(now time.Time) {
	rs.mu.Lock()
	var evict []*runRecord
	for len(rs.runs) > 0 && (len(rs.runs) > rs.s.cfg.MaxRuns || now.Sub(rs.runs[0].done) > rs.s.cfg.MaxRunAge) {
		evict = append(evict, rs.runs[0])
		rs.runs = rs.runs[1:]
	}
	rs.mu.Unlock()
	for _, old := range evict {
		rs.s.mcp.DeleteResources(old.uris...)
		os.RemoveAll(old.dir)
	}
}

// expire evicts runs past MaxRunAge every interval until ctx ends, so that
// an idle server does not keep them.
func (rs *runStore) expire(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			rs.evict(now)
		}
	}
}

func (rs *runStore) find(id string) *runRecord {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for _, r := range rs.runs {
		if r.id == id {
			return r
		}
	}
	return nil
}

func (s *Server) addConnResource(c *connection) {
	s.mcp.AddResource(mcp.NewResource(connLogURI(c.id), "connection "+c.id+" log ("+c.port+")",
		mcp.WithResourceDescription("the exact bytes "+c.port+" sent while open as connection "+c.id),
		mcp.WithMIMEType("text/plain")), s.readResource)
}

func (s *Server) addResourceTemplates() {
	s.mcp.AddResourceTemplate(mcp.NewResourceTemplate(runReportTemplate, "run report",
		mcp.WithTemplateDescription("JSON report of a serial_sequence or run_sequence run, as hilrun run --json writes it"),
		mcp.WithTemplateMIMEType("application/json")), s.readResource)
	s.mcp.AddResourceTemplate(mcp.NewResourceTemplate(runHTMLTemplate, "run HTML report",
		mcp.WithTemplateDescription("self-contained HTML report of a serial_sequence or run_sequence run, as hilrun run --html writes it"),
		mcp.WithTemplateMIMEType("text/html")), s.readResource)
	s.mcp.AddResourceTemplate(mcp.NewResourceTemplate(runConsoleTemplate, "run console log",
		mcp.WithTemplateDescription("the exact bytes a console sent during a run; name is NAME.log"),
		mcp.WithTemplateMIMEType("text/plain")), s.readResource)
	s.mcp.AddResourceTemplate(mcp.NewResourceTemplate(runBuildTemplate, "run build log",
		mcp.WithTemplateDescription("the whole output of a build or upload step during a run; name is KIND-steps-N.log (the step's JSON pointer), or KIND-lineN.log for a sequence file"),
		mcp.WithTemplateMIMEType("text/plain")), s.readResource)
	s.mcp.AddResourceTemplate(mcp.NewResourceTemplate(runFileTemplate, "run file",
		mcp.WithTemplateDescription("a picture (NAME.png, image/png) a camera step took, or the output of a host command (NAME.log, text/plain), during a run")), s.readResource)
	s.mcp.AddResourceTemplate(mcp.NewResourceTemplate(taskLogTemplate, "task log",
		mcp.WithTemplateDescription("the whole output of a build or upload task, readable while it runs"),
		mcp.WithTemplateMIMEType("text/plain")), s.readResource)
	s.mcp.AddResourceTemplate(mcp.NewResourceTemplate(connLogTemplate, "connection log",
		mcp.WithTemplateDescription("the exact bytes a serial_open connection received, readable after serial_close"),
		mcp.WithTemplateMIMEType("text/plain")), s.readResource)
}

// resourcePath maps a resource URI to its file.
func (s *Server) resourcePath(uri string) (string, string, error) {
	rest, ok := strings.CutPrefix(uri, "hilrun://")
	if !ok {
		return "", "", fmt.Errorf("unknown resource %s", uri)
	}
	parts := strings.Split(rest, "/")
	switch {
	case len(parts) == 3 && parts[0] == "runs" && (parts[2] == "report.json" || parts[2] == "report.html"):
		r := s.runs.find(parts[1])
		if r == nil {
			return "", "", fmt.Errorf("no run %s: only the last %d runs are kept", parts[1], s.cfg.MaxRuns)
		}
		if parts[2] == "report.html" {
			p, err := r.htmlPath()
			return p, "text/html", err
		}
		p, err := r.reportPath()
		return p, "application/json", err
	case len(parts) == 4 && parts[0] == "runs" && parts[2] == artifactDir:
		r := s.runs.find(parts[1])
		if r == nil {
			return "", "", fmt.Errorf("no run %s: only the last %d runs are kept", parts[1], s.cfg.MaxRuns)
		}
		name := parts[3]
		mime := map[string]string{".log": "text/plain", ".png": "image/png"}[filepath.Ext(name)]
		if name != filepath.Base(name) || strings.HasPrefix(name, ".") || mime == "" {
			return "", "", fmt.Errorf("unknown run file %s", uri)
		}
		return filepath.Join(r.dir, artifactDir, name), mime, nil
	case len(parts) == 4 && parts[0] == "runs" && (parts[2] == "console" || parts[2] == buildDir):
		r := s.runs.find(parts[1])
		if r == nil {
			return "", "", fmt.Errorf("no run %s: only the last %d runs are kept", parts[1], s.cfg.MaxRuns)
		}
		name := parts[3]
		if name != filepath.Base(name) || !strings.HasSuffix(name, ".log") || name == ".log" {
			return "", "", fmt.Errorf("unknown %s log %s", parts[2], uri)
		}
		if parts[2] == buildDir {
			return filepath.Join(r.dir, buildDir, name), "text/plain", nil
		}
		return filepath.Join(r.dir, name), "text/plain", nil
	case len(parts) == 3 && parts[0] == "tasks" && parts[2] == "log":
		t := s.tasks.find(parts[1])
		if t == nil {
			return "", "", fmt.Errorf("no task %s: only the last %d tasks are kept", parts[1], maxTasks)
		}
		return t.logPath, "text/plain", nil
	case len(parts) == 3 && parts[0] == "connections" && parts[2] == "log":
		id := parts[1]
		if id == "" || id != filepath.Base(id) || strings.HasPrefix(id, ".") {
			return "", "", fmt.Errorf("unknown connection %s", id)
		}
		dir := filepath.Join(s.logDir, "connections", id)
		entries, err := os.ReadDir(dir)
		if err != nil {
			return "", "", fmt.Errorf("no log for connection %s: only open connections' logs and those of the last %d closed are kept", id, s.keepClosed)
		}
		var logs []string
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".log") {
				logs = append(logs, e.Name())
			}
		}
		sort.Strings(logs)
		if len(logs) == 0 {
			return "", "", fmt.Errorf("no log for connection %s", id)
		}
		return filepath.Join(dir, logs[0]), "text/plain", nil
	}
	return "", "", fmt.Errorf("unknown resource %s", uri)
}

// markMissingResource runs before mcp-go looks a resources/read up. A
// resource that does not exist (an unknown URI, a run or task no longer
// kept, a file that is gone) must get the MCP error -32002, resource not
// found, but mcp-go reports every error of a resource handler as -32603,
// internal error: it gives -32002 only for a URI that no resource or
// template matches. So the request's URI becomes one that matches
// nothing, with the reason in it, and the client reads, under -32002:
// handler not found for resource URI 'hilrun://runs/r9/report.json (no run
// r9: only the last 50 runs are kept)'.
func (s *Server) markMissingResource(ctx context.Context, id any, req *mcp.ReadResourceRequest) {
	uri := req.Params.URI
	p, _, err := s.resourcePath(uri)
	if err == nil {
		if _, serr := os.Stat(p); serr != nil && errors.Is(serr, os.ErrNotExist) {
			err = errors.New("its file is gone")
		}
	}
	if err != nil {
		// A space is in no URI a template matches.
		req.Params.URI = uri + " (" + err.Error() + ")"
	}
}

// readResource serves a log or report: text when it is UTF-8, else the
// exact bytes as a blob.
func (s *Server) readResource(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	uri := req.Params.URI
	p, mime, err := s.resourcePath(uri)
	if err != nil {
		return nil, err
	}
	data, err := s.own.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("resource %s is gone", uri)
	}
	if err != nil {
		return nil, err
	}
	if mime == "image/png" {
		return []mcp.ResourceContents{mcp.BlobResourceContents{URI: uri, MIMEType: mime, Blob: base64.StdEncoding.EncodeToString(data)}}, nil
	}
	if utf8.Valid(data) {
		return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: mime, Text: string(data)}}, nil
	}
	return []mcp.ResourceContents{mcp.BlobResourceContents{URI: uri, MIMEType: "application/octet-stream", Blob: base64.StdEncoding.EncodeToString(data)}}, nil
}

// writeHTMLReport writes the HTML report of a run from its event file,
// through a temporary file so that a reader never sees half of it. The
// report embeds only what lies in the run's folder (the folder of path),
// whatever the event file names.
func writeHTMLReport(path, events, version string) error {
	fs, err := files.Under(filepath.Dir(path))
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := fs.Create(tmp)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := report.WriteHTML(f, events, report.HTMLOptions{Files: fs, Info: report.RunInfo{Version: version, Command: []string{"hilrun", "mcp"}}}); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
