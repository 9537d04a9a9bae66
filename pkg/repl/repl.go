// Package repl is hilrun's interactive session: one line at a time, each run
// as a one-step sequence through the runner against consoles and probes
// that stay open for the whole session, with device output shown live.
package repl

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/hilrun/hilrun/pkg/elfsym"
	"io"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
	"gopkg.in/yaml.v3"

	"github.com/hilrun/hilrun/pkg/plan"
	"github.com/hilrun/hilrun/pkg/report"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/serialx"
	"github.com/hilrun/hilrun/pkg/steps"
	"github.com/hilrun/hilrun/pkg/stream"
)

// Keys with a meaning of their own while a step runs or in raw mode.
const (
	keyInterrupt = 0x03 // Ctrl-C: cancel the running step
	keyEscape    = 0x1d // Ctrl-]: leave :raw, as in telnet
	keyKillLine  = 0x15 // Ctrl-U
)

// Options configure a session.
type Options struct {
	// Seq holds the bound devices and probes of the session, and, when a
	// file was loaded, its vars, settings and steps (for :next).
	Seq *steps.Sequence
	// Loaded is true when Seq came from a file the user named.
	Loaded bool
	// Bench is how the bench is reached (internal/engine's): its Open and
	// OpenProbe open the session's consoles and probes, and every line runs
	// on it, with the session's held consoles and probes standing in for
	// Open and OpenProbe.
	Bench runner.Bench
	// Plan makes the plan a line runs as, with the session's variables;
	// the command binds nothing more than the line holds (BindLine does).
	Plan func(line *steps.Sequence, vars map[string]string) (*plan.Plan, error)
	// ArtifactDir receives the pictures and host command output of lines.
	ArtifactDir string
	// Check, if set, refuses a line's steps that the session's probes
	// cannot run (an openocd step on a GDB probe) before it runs.
	Check func(*steps.Sequence) error
	// BindLine, if set, binds the cameras of each typed line's sequence
	// (the bench file's, or the virtual board's under --sim): it returns
	// the bound copy, leaving the line's sequence as it was.
	BindLine func(*steps.Sequence) *steps.Sequence
	Vars     map[string]string
	// In and Out are the terminal, already in raw mode.
	In  io.Reader
	Out io.Writer
	// History keeps the typed lines; nil keeps none.
	History *History
	// Given is the sequence file as its author wrote it, before the bench
	// file and flags bound it (nil without a file). :record writes a
	// device's port or a probe's OpenOCD or GDB stub address only when
	// Given gives that same one: what --port, --probe, --sim or the bench
	// file bound stays this bench's, so a recording binds on any bench.
	Given *steps.Sequence
	// SessionELF is an ELF file that lives only as long as the session
	// (the virtual board's firmware image under --sim): :record files
	// leave it out, as a replay would not find it.
	SessionELF string
	// Script reads In as a script, not a terminal: lines are taken as they
	// come, neither edited nor completed; each is echoed after "hilrun> "
	// so the output reads as a transcript; the output carries no escape
	// codes; :raw is refused. Run then returns ErrStepFailed,
	// ErrStepErrored or ErrBadLine when a line's step failed, ended in a
	// bench error, or could not be read.
	Script bool
	// TermSize reports the terminal's width and height in characters, so
	// that the line editor wraps where the terminal does; it is asked
	// before each line is read. nil, or ok false, keeps the editor's
	// 80x24.
	TermSize func() (width, height int, ok bool)
}

// Errors of a script session (Options.Script): what went wrong in its
// lines. Run joins those that happened.
var (
	ErrStepFailed  = errors.New("a step failed")
	ErrStepErrored = errors.New("a step ended in a bench error")
	ErrBadLine     = errors.New("a line is not a step or command")
)

// screen is where a session reads lines and writes: a terminal, or a
// script's plain input and output.
type screen interface {
	io.Writer
	ReadLine() (string, error)
}

// sizer is the line editor's ability to be told the terminal's size.
type sizer interface {
	SetSize(width, height int) error
}

// fitTerminal tells the line editor the terminal's size, when it changed.
func (s *Session) fitTerminal() {
	sz, ok := s.t.(sizer)
	if !ok || s.opts.TermSize == nil {
		return
	}
	w, h, ok := s.opts.TermSize()
	if !ok || w <= 0 || h <= 0 || w == s.width && h == s.height {
		return
	}
	if sz.SetSize(w, h) == nil {
		s.width, s.height = w, h
	}
}

// ErrOpen wraps the failure to open a device at the start of a session.
var ErrOpen = errors.New("open the bench")

type mode int

const (
	modeLine mode = iota
	modeRunning
	modeRaw
)

// Session is one REPL session.
type Session struct {
	opts Options
	t    screen
	out  io.Writer
	// width and height are the terminal size the line editor was last
	// told (see fitTerminal).
	width, height int
	// dim and reset set device output apart on a terminal; "" in a
	// script.
	dim, reset string
	// failed, errored and badLine say what went wrong in a script.
	failed, errored, badLine bool

	mu      sync.Mutex
	mode    mode
	cancel  context.CancelFunc
	rawDone chan struct{}

	consoles map[string]runner.Console
	probes   map[string]runner.Debugger
	cursor   map[string]int64
	// sent holds, per device, where the reply to the last send began, so
	// that a line's send waits for the prompt after the previous line's.
	sent    map[string]runner.SendMark
	outputs map[string]*output
	current string
	vars    map[string]string
	symbols []string
	history []entry
	next    int
	fileSeq []*yaml.Node
	input   chan []byte
	closers []func()
}

// entry is a step run in this session, for :steps and :record.
type entry struct {
	node   *yaml.Node
	status runner.Status
	dev    string
	cursor int64 // where the reply to a send begins (after its echo); -1 for other steps
	// atPrompt is true for a send that went out at the device's prompt:
	// what it printed before the next prompt is its reply, not boot
	// output.
	atPrompt bool
}

// Run runs a session until :quit, Ctrl-D or the end of input. Devices that
// cannot be opened are an error wrapping ErrOpen; probes that cannot be
// opened are reported and left out.
func Run(ctx context.Context, opts Options) error {
	s := &Session{
		opts: opts, out: opts.Out,
		consoles: map[string]runner.Console{}, probes: map[string]runner.Debugger{},
		cursor: map[string]int64{}, sent: map[string]runner.SendMark{}, outputs: map[string]*output{}, vars: map[string]string{},
		input: make(chan []byte, 256),
	}
	for k, v := range opts.Vars {
		s.vars[k] = v
	}
	if opts.Script {
		s.t = &scriptScreen{in: bufio.NewReader(&chanReader{c: s.input}), out: opts.Out}
	} else {
		t := term.NewTerminal(struct {
			io.Reader
			io.Writer
		}{&chanReader{c: s.input}, opts.Out}, "hilrun> ")
		if opts.History != nil {
			t.History = opts.History
		}
		t.AutoCompleteCallback = s.complete
		s.t = t
		s.dim, s.reset = dim, reset
	}
	defer s.close()
	if err := s.open(ctx); err != nil {
		return err
	}
	if opts.Loaded {
		s.fileSeq = fileStepNodes(opts.Seq.File)
	}
	go s.pump()
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go s.watchConnections(watchCtx)
	s.say("%s; type :help for commands, Ctrl-D to quit", s.describeBench())
	for {
		s.fitTerminal()
		line, err := s.t.ReadLine()
		if err != nil {
			break
		}
		if quit := s.handle(ctx, strings.TrimSpace(line)); quit {
			break
		}
		if ctx.Err() != nil {
			break
		}
	}
	if opts.History != nil && !opts.Script {
		if err := opts.History.Save(); err != nil {
			s.say("save history: %v", err)
		}
	}
	if !opts.Script {
		return nil
	}
	var errs []error
	for _, e := range []struct {
		happened bool
		err      error
	}{{s.errored, ErrStepErrored}, {s.badLine, ErrBadLine}, {s.failed, ErrStepFailed}} {
		if e.happened {
			errs = append(errs, e.err)
		}
	}
	return errors.Join(errs...)
}

// scriptScreen reads a script's lines and writes plain output.
type scriptScreen struct {
	in  *bufio.Reader
	mu  sync.Mutex
	out io.Writer
}

func (s *scriptScreen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.Write(p)
}

// ReadLine returns the next line, echoed after the prompt as a terminal
// would show it.
func (s *scriptScreen) ReadLine() (string, error) {
	line, err := s.in.ReadString('\n')
	if err != nil && line == "" {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	fmt.Fprintf(s, "hilrun> %s\n", line)
	return line, nil
}

func (s *Session) describeBench() string {
	var parts []string
	for _, d := range s.opts.Seq.Devices {
		parts = append(parts, "device "+d.Name+" ("+d.Port+")")
	}
	for _, p := range s.opts.Seq.Probes {
		if _, ok := s.probes[p.Name]; ok {
			parts = append(parts, "probe "+p.Name)
		}
	}
	return "connected to " + strings.Join(parts, ", ")
}

// connState is a console that says whether its device is there:
// *serialx.Console.
type connState interface {
	Stats() serialx.Stats
}

// watchConnections reports a device that disappears and comes back; the
// consoles reconnect by themselves and the session goes on.
func (s *Session) watchConnections(ctx context.Context) {
	up := map[string]bool{}
	for name := range s.consoles {
		up[name] = true
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for name, c := range s.consoles {
			cs, ok := c.(connState)
			if !ok {
				continue
			}
			st := cs.Stats()
			switch {
			case up[name] && !st.Connected && !st.Released:
				s.say("device %s disconnected; waiting for it to come back", name)
				up[name] = false
			case !up[name] && st.Connected:
				s.say("device %s is back", name)
				up[name] = true
			}
		}
	}
}

// say prints one of hilrun's own messages above the prompt.
func (s *Session) say(format string, args ...any) {
	fmt.Fprintf(s.t, "hilrun: "+format+"\n", args...)
}

func (s *Session) open(ctx context.Context) error {
	for _, dev := range s.opts.Seq.Devices {
		dev.Reconnect = true
		c, err := s.opts.Bench.Open(ctx, dev)
		if err != nil {
			return fmt.Errorf("%w: device %s: %w", ErrOpen, dev.Name, err)
		}
		name := dev.Name
		s.consoles[name] = c
		s.cursor[name] = c.Cursor()
		o := &output{s: s, name: name}
		s.outputs[name] = o
		s.closers = append(s.closers, c.OnReceive(func(_ time.Time, off int64, p []byte) { o.receive(off, p) }))
		if s.current == "" {
			s.current = name
		}
	}
	for _, p := range s.opts.Seq.Probes {
		if s.opts.Bench.OpenProbe == nil {
			break
		}
		d, err := s.opts.Bench.OpenProbe(ctx, p)
		if err != nil {
			s.say("probe %s: %v (memory steps on it will fail)", p.Name, err)
			continue
		}
		s.probes[p.Name] = d
		if p.ELF != "" {
			if syms, err := elfsym.LoadSymbols(p.ELF); err == nil {
				s.symbols = append(s.symbols, syms.Names()...)
			}
		}
	}
	return nil
}

func (s *Session) close() {
	for _, f := range s.closers {
		f()
	}
	for _, o := range s.outputs {
		o.flush()
	}
	for _, c := range s.consoles {
		c.Close()
	}
	for _, d := range s.probes {
		d.Close()
	}
}

// pump reads the terminal. Keys go to the line editor, except Ctrl-C (which
// cancels a running step and clears the line otherwise) and, in :raw, every
// key but the escape, which goes to the device.
func (s *Session) pump() {
	buf := make([]byte, 256)
	for {
		n, err := s.opts.In.Read(buf)
		if err != nil {
			close(s.input)
			return
		}
		p := append([]byte(nil), buf[:n]...)
		s.mu.Lock()
		m, cancel, dev := s.mode, s.cancel, s.current
		s.mu.Unlock()
		switch m {
		case modeRaw:
			if i := slices.Index(p, keyEscape); i >= 0 {
				if i > 0 {
					s.consoles[dev].Write(context.Background(), p[:i])
				}
				s.mu.Lock()
				s.mode = modeLine
				close(s.rawDone)
				s.mu.Unlock()
				continue
			}
			s.consoles[dev].Write(context.Background(), p)
		case modeRunning:
			if i := slices.Index(p, keyInterrupt); i >= 0 {
				if cancel != nil {
					cancel()
				}
				p = slices.Delete(p, i, i+1)
			}
			if len(p) > 0 {
				s.input <- p
			}
		default:
			for i, b := range p {
				if b == keyInterrupt {
					p[i] = keyKillLine
				}
			}
			s.input <- p
		}
	}
}

// chanReader reads what pump passes on.
type chanReader struct {
	c    chan []byte
	rest []byte
}

func (r *chanReader) Read(p []byte) (int, error) {
	if len(r.rest) == 0 {
		b, ok := <-r.c
		if !ok {
			return 0, io.EOF
		}
		r.rest = b
	}
	n := copy(p, r.rest)
	r.rest = r.rest[n:]
	return n, nil
}

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
	base := s.opts.Seq
	for _, d := range seq.Devices {
		if s.consoles[d.Name] == nil {
			return &runner.SequenceResult{Status: runner.Errored, Error: "unknown device " + d.Name}
		}
	}
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
	rep := report.NewConsole(s.t, report.ConsoleOptions{})
	sink := runner.SinkFunc(func(e runner.Event) {
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
	pl, err := s.opts.Plan(seq, s.vars)
	if err != nil {
		s.say("%v", err)
		return &runner.SequenceResult{Status: runner.Errored, Error: err.Error()}
	}
	bench := s.opts.Bench.WithOpen(func(runner.Opener) runner.Opener {
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

func (s *Session) runFile(ctx context.Context, path string) {
	if path == "" {
		s.say("usage: run FILE")
		return
	}
	var names []string
	for k := range s.vars {
		names = append(names, k)
	}
	seq, err := steps.Load(path, steps.LoadOptions{Vars: names})
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

func (s *Session) deviceNames() []string {
	var names []string
	for _, d := range s.opts.Seq.Devices {
		names = append(names, d.Name)
	}
	return names
}

func (s *Session) probeNames() []string {
	var names []string
	for _, p := range s.opts.Seq.Probes {
		names = append(names, p.Name)
	}
	return names
}

// meta runs a colon command; it reports whether the session ends.
func (s *Session) meta(ctx context.Context, line string) bool {
	f := strings.Fields(line)
	switch f[0] {
	case ":quit", ":q", ":exit":
		return true
	case ":help":
		s.help()
	case ":vars":
		var keys []string
		for k := range s.vars {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, v := range s.opts.Seq.Vars {
			if _, ok := s.vars[v.Name]; !ok {
				s.say("%s (from the file)", v.Name)
			}
		}
		for _, k := range keys {
			s.say("%s = %q", k, s.vars[k])
		}
		if len(keys) == 0 && len(s.opts.Seq.Vars) == 0 {
			s.say("no variables")
		}
	case ":steps":
		if len(s.history) == 0 {
			s.say("no steps run yet")
		}
		for i, e := range s.history {
			s.say("%d %s %s", i+1, flow(e.node), e.status)
		}
	case ":list":
		if len(s.fileSeq) == 0 {
			s.say("no file loaded: start hilrun repl FILE")
		}
		for i, n := range s.fileSeq {
			mark := " "
			if i == s.next {
				mark = ">"
			}
			s.say("%s %d %s", mark, i+1, flow(n))
		}
	case ":next":
		if s.next >= len(s.fileSeq) {
			s.say("no more steps in the file")
			return false
		}
		n := s.fileSeq[s.next]
		s.next++
		fmt.Fprintf(s.t, "hilrun> %s\n", flow(n))
		s.runNodes(ctx, []*yaml.Node{n})
	case ":record":
		expects, path := false, ""
		for _, a := range f[1:] {
			if a == "--expects" {
				expects = true
			} else {
				path = a
			}
		}
		if path == "" {
			s.say("usage: :record [--expects] FILE")
			return false
		}
		if err := s.record(path, expects); err != nil {
			s.say("record: %v", err)
			return false
		}
		s.say("wrote %s", path)
	case ":raw":
		if s.opts.Script {
			s.say(":raw needs a terminal")
			s.badLine = true
			return false
		}
		s.raw()
	default:
		s.say("unknown command %s: type :help", f[0])
		s.badLine = true
	}
	return false
}

func (s *Session) help() {
	var b strings.Builder
	b.WriteString("hilrun: a line is a command or a step in flow form, e.g. {send: AT, expect: OK}\n")
	for _, h := range commandHelp {
		fmt.Fprintf(&b, "  %-28s %s\n", h.name+" "+h.args, h.what)
	}
	for _, h := range metaHelp {
		fmt.Fprintf(&b, "  %-28s %s\n", h.name+" "+h.args, h.what)
	}
	b.WriteString("  Ctrl-C cancels the running step; Tab completes; Ctrl-D quits.\n")
	fmt.Fprint(s.t, b.String())
}

// raw passes keystrokes to the current device until Ctrl-].
func (s *Session) raw() {
	done := make(chan struct{})
	s.mu.Lock()
	dev := s.current
	s.mu.Unlock()
	s.say("raw mode on %s: keys go to the device; Ctrl-] returns to hilrun", dev)
	s.outputs[dev].flush()
	s.mu.Lock()
	s.mode, s.rawDone = modeRaw, done
	s.mu.Unlock()
	<-done
	fmt.Fprint(s.t, "\n")
	s.say("raw mode off")
}

func (s *Session) isRaw() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mode == modeRaw
}

// flow is a step node on one line.
func flow(n *yaml.Node) string {
	c := *n
	c.Style = yaml.FlowStyle
	b, err := yaml.Marshal(&c)
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}

// fileStepNodes returns the nodes of a sequence file's steps, for :next.
func fileStepNodes(path string) []*yaml.Node {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return nil
	}
	root := doc.Content[0]
	if root.Kind == yaml.SequenceNode {
		return root.Content
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "steps" {
			return root.Content[i+1].Content
		}
	}
	return nil
}

// heldConsole is an open console lent to one run: closing it does nothing,
// and its cursor is the session's, so a step starts where the previous
// line left off, as the next step of a file would.
type heldConsole struct {
	runner.Console
	s    *Session
	name string
}

func (h *heldConsole) Close() error { return nil }

// Unwrap is the session's console, for the runner's modem line steps.
func (h *heldConsole) Unwrap() runner.Console { return h.Console }

func (h *heldConsole) Cursor() int64 {
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	return h.s.cursor[h.name]
}

// LastSend is where the reply to the session's last send on this device
// began, so the runner waits for the prompt after it.
func (h *heldConsole) LastSend() (runner.SendMark, bool) {
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	m, ok := h.s.sent[h.name]
	return m, ok
}

// SetLastSend keeps m for the next line's send.
func (h *heldConsole) SetLastSend(m runner.SendMark) {
	h.s.mu.Lock()
	h.s.sent[h.name] = m
	h.s.mu.Unlock()
}

func (h *heldConsole) setCursor(c int64) {
	h.s.mu.Lock()
	h.s.cursor[h.name] = c
	h.s.mu.Unlock()
}

func (h *heldConsole) Write(ctx context.Context, p []byte) (int64, error) {
	c, err := h.Console.Write(ctx, p)
	if err == nil {
		h.setCursor(c)
	}
	return c, err
}

func (h *heldConsole) Expect(ctx context.Context, from int64, want, failOn []stream.Pattern) (stream.Match, error) {
	m, err := h.Console.Expect(ctx, from, want, failOn)
	if err == nil {
		h.setCursor(m.End)
	}
	return m, err
}

func (h *heldConsole) Capture(ctx context.Context, from int64, opt stream.CaptureOptions) (stream.Capture, error) {
	c, err := h.Console.Capture(ctx, from, opt)
	if c.End > 0 {
		h.setCursor(c.End)
	}
	return c, err
}

// handover is a console that can let go of its port for an upload.
type handover interface {
	Release(ctx context.Context) error
	Reacquire(ctx context.Context) error
}

// Release lends the console's port to an upload step's tool.
func (h *heldConsole) Release(ctx context.Context) error {
	hc, ok := h.Console.(handover)
	if !ok {
		return fmt.Errorf("console %s cannot hand its port over", h.name)
	}
	return hc.Release(ctx)
}

// Reacquire takes the port back after an upload; the next line starts with
// what the device prints from then on.
func (h *heldConsole) Reacquire(ctx context.Context) error {
	hc, ok := h.Console.(handover)
	if !ok {
		return fmt.Errorf("console %s cannot hand its port over", h.name)
	}
	h.setCursor(h.Console.Cursor())
	return hc.Reacquire(ctx)
}

// heldProbe is an open probe session lent to one run.
type heldProbe struct{ runner.Debugger }

func (heldProbe) Close() error { return nil }

// Unwrap is the session, whose optional abilities (loading and programming
// images) the runner finds through it.
func (h heldProbe) Unwrap() runner.Debugger { return h.Debugger }

// sessionPath renumbers the path of a line's step ("0", "0.2") as the
// session's step it is, numbered from 1 as :steps lists them, when done
// steps ran before it.
func sessionPath(path string, done int) string {
	top, rest, nested := strings.Cut(path, ".")
	n, err := strconv.Atoi(top)
	if err != nil {
		return path
	}
	top = strconv.Itoa(done + n + 1)
	if nested {
		return top + "." + rest
	}
	return top
}
