package repl

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/hilrun/hilrun/pkg/plan"
	"github.com/hilrun/hilrun/pkg/report"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
	"github.com/hilrun/hilrun/pkg/stream"
)

// handle runs one line; it reports whether the session ends.
func (s *Session) handle(ctx context.Context, line string) bool {
	if line == "" || strings.HasPrefix(line, "#") {
		return false
	}
	if strings.HasPrefix(line, ":") {
		return s.meta(ctx, line)
	}
	name, rest, _ := strings.Cut(line, " ")
	rest = strings.TrimSpace(rest)
	switch name {
	case "use":
		if _, ok := s.consoles[rest]; !ok {
			s.say("use: unknown device %q; devices are %s", rest, strings.Join(s.deviceNames(), ", "))
			s.badLine = true
			return false
		}
		s.mu.Lock()
		s.current = rest
		s.mu.Unlock()
		s.say("steps without to: now talk to %s", rest)
		return false
	case "run":
		s.runFile(ctx, rest)
		return false
	}
	text, err := translate(line)
	if err != nil {
		s.say("%v", err)
		s.badLine = true
		return false
	}
	nodes, err := stepNodes(text, s.current, len(s.consoles) > 1)
	if err != nil {
		s.say("%v", err)
		s.badLine = true
		return false
	}
	s.runNodes(ctx, nodes)
	return false
}

// runNodes runs step nodes as a sequence and records them.
func (s *Session) runNodes(ctx context.Context, nodes []*yaml.Node) {
	seq, err := s.parse(nodes)
	if err != nil {
		s.say("%v", err)
		s.badLine = true
		return
	}
	res := s.run(ctx, seq, false)
	for i, n := range nodes {
		e := entry{node: n, status: runner.Skipped, cursor: -1}
		if i < len(seq.Steps) {
			e.dev = seq.Steps[i].To
		}
		for _, r := range res.Steps {
			if r.Path != fmt.Sprint(i) {
				continue
			}
			e.status = r.Status
			if c, ok := r.Data["cursor"].(int64); ok && r.Kind == string(steps.KindSend) {
				e.cursor = c
				if reply, ok := r.Data["reply"].(int64); ok {
					e.cursor = reply
				}
				e.atPrompt, _ = r.Data["at_prompt"].(bool)
			}
		}
		s.history = append(s.history, e)
	}
}

// parse builds a sequence from step nodes, with the session's devices,
// probes and variables.
func (s *Session) parse(nodes []*yaml.Node) (*steps.Sequence, error) {
	devs := mapping(0)
	for _, d := range s.opts.Seq.Devices {
		devs.Content = append(devs.Content, scalar(d.Name), mapping(yaml.FlowStyle))
	}
	doc := mapping(0, scalar("name"), scalar("repl"), scalar("devices"), devs)
	if len(s.opts.Seq.Probes) > 0 {
		probes := mapping(0)
		for _, p := range s.opts.Seq.Probes {
			probes.Content = append(probes.Content, scalar(p.Name), mapping(yaml.FlowStyle))
		}
		doc.Content = append(doc.Content, scalar("probes"), probes)
	}
	if len(s.opts.Seq.Cameras) > 0 {
		cams := mapping(0)
		for _, c := range s.opts.Seq.Cameras {
			if !c.Implicit {
				cams.Content = append(cams.Content, scalar(c.Name), mapping(yaml.FlowStyle))
			}
		}
		if len(cams.Content) > 0 {
			doc.Content = append(doc.Content, scalar("cameras"), cams)
		}
	}
	if secrets := s.secretsNode(); secrets != nil {
		doc.Content = append(doc.Content, scalar("secrets"), secrets)
	}
	doc.Content = append(doc.Content, scalar("steps"), &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: nodes})
	data, err := yaml.Marshal(doc)
	if err != nil {
		return nil, err
	}
	var names []string
	for k := range s.vars {
		names = append(names, k)
	}
	for _, v := range s.opts.Seq.Vars {
		names = append(names, v.Name)
	}
	seq, err := steps.Parse("repl", data, steps.LoadOptions{Vars: names})
	if err != nil {
		return nil, err
	}
	return seq, nil
}

// run runs seq against the open consoles and probes. whole prints the
// sequence's header and summary too, as hilrun run does.
func (s *Session) run(ctx context.Context, seq *steps.Sequence, whole bool) *runner.SequenceResult {
	for _, d := range seq.Devices {
		if s.consoles[d.Name] == nil {
			return &runner.SequenceResult{Status: runner.Errored, Error: "unknown device " + d.Name}
		}
	}
	seq = s.bindLine(seq, whole)
	if err := steps.CheckPower(seq); err != nil {
		s.say("%v", err)
		return &runner.SequenceResult{Status: runner.Errored, Error: err.Error()}
	}
	if s.opts.Check != nil {
		if err := s.opts.Check(seq); err != nil {
			s.say("%v", err)
			return &runner.SequenceResult{Status: runner.Errored, Error: err.Error()}
		}
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.mu.Lock()
	s.mode, s.cancel = modeRunning, cancel
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.mode, s.cancel = modeLine, nil
		s.mu.Unlock()
	}()
	sink := s.lineSink(whole)
	pl, err := s.opts.Plan(seq, s.vars)
	if err != nil {
		s.say("%v", err)
		return &runner.SequenceResult{Status: runner.Errored, Error: err.Error()}
	}
	bench := s.heldBench()
	res := pl.Run(rctx, bench, plan.Output{Sink: sink, KeepSteps: true, ArtifactDir: s.opts.ArtifactDir})
	switch res.Status {
	case runner.Failed:
		s.failed = true
	case runner.Errored:
		s.errored = true
	}
	for _, r := range res.Steps {
		for k, v := range r.Saved {
			s.vars[k] = steps.FormatValue(v)
		}
	}
	if len(res.Steps) == 0 && res.Error != "" {
		s.say("%s", res.Error)
	}
	if ctx.Err() == nil && rctx.Err() != nil {
		s.say("step cancelled")
	}
	return res
}

// bindLine binds a line's sequence to the session: a typed line runs on the
// session's devices, probes, variables, settings, cameras and power
// entries; a file run with run FILE (whole) on its own, bound to the bench.
func (s *Session) bindLine(seq *steps.Sequence, whole bool) *steps.Sequence {
	base := s.opts.Seq
	if !whole {
		if s.opts.BindLine != nil {
			seq = s.opts.BindLine(seq)
		}
		seq.Devices, seq.Probes, seq.Vars = base.Devices, base.Probes, base.Vars
		seq.FailOn, seq.ExpectTimeout, seq.FilterResponses = base.FailOn, base.ExpectTimeout, base.FilterResponses
		// The session's cameras and power entries (from the file and the
		// bench) stand for the line's.
		for i, c := range seq.Cameras {
			if b := base.Camera(c.Name); b != nil {
				seq.Cameras[i] = b
			}
		}
		if len(base.Power) > 0 {
			seq.Power = base.Power
		}
	} else if s.opts.BindLine != nil {
		// A file run with run FILE: the bench's cameras and power too.
		seq = s.opts.BindLine(seq)
	}
	return seq
}

// lineSink shows a line's events: the steps as run shows them, numbered
// through the session, and the output of host commands and build tools
// (the consoles show their own).
func (s *Session) lineSink(whole bool) runner.Sink {
	rep := report.NewConsole(s.t, report.ConsoleOptions{})
	return runner.SinkFunc(func(e runner.Event) {
		switch e.Type {
		case runner.ConsoleOutput, runner.ConsoleInput:
			// Consoles show their output themselves; what host commands
			// and build tools print (one line per event) is shown here.
			if e.Type == runner.ConsoleOutput && s.consoles[e.Console] == nil {
				s.t.Write([]byte(s.dim + e.Console + "│ " + stream.Printable(bytes.TrimRight(e.Data, "\r\n")) + s.reset + "\n"))
			}
			return
		case runner.SequenceStarted, runner.SequenceFinished:
			if !whole {
				return
			}
		}
		if !whole && e.Step != nil {
			// Step numbers count through the session, as :steps lists
			// them, rather than starting at 0 on every line.
			st := *e.Step
			st.Path = sessionPath(st.Path, len(s.history))
			e.Step = &st
		}
		rep.Event(e)
	})
}

// heldBench is the session's bench with the session's consoles and probes,
// held across lines, standing in for opening them.
func (s *Session) heldBench() runner.Bench {
	return s.opts.Bench.WithOpen(func(runner.Opener) runner.Opener {
		return func(_ context.Context, dev *steps.Device) (runner.Console, error) {
			return &heldConsole{Console: s.consoles[dev.Name], s: s, name: dev.Name}, nil
		}
	}).WithOpenProbe(func(runner.ProbeOpener) runner.ProbeOpener {
		return func(_ context.Context, p *steps.Probe) (runner.Debugger, error) {
			d := s.probes[p.Name]
			if d == nil {
				return nil, fmt.Errorf("probe %s is not open", p.Name)
			}
			return heldProbe{d}, nil
		}
	}).WithoutLogPaths() // the session's consoles keep their own logs
}

func (s *Session) runFile(ctx context.Context, path string) {
	if path == "" {
		s.say("usage: run FILE")
		return
	}
	var names []string
	for k := range s.vars {
		names = append(names, k)
	}
	seq, err := steps.Load(s.opts.Files, path, steps.LoadOptions{Vars: names})
	if err != nil {
		s.say("%v", err)
		s.badLine = true
		return
	}
	for _, p := range seq.Probes {
		if bp := s.opts.Seq.Probe(p.Name); bp != nil {
			*p = *bp
		}
	}
	s.run(ctx, seq, true)
}
