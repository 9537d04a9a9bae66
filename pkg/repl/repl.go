// Package repl is hilrun's interactive session: one line at a time, each run
// as a one-step sequence through the runner against consoles and probes
// that stay open for the whole session, with device output shown live.
package repl

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"golang.org/x/term"
	"gopkg.in/yaml.v3"

	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/plan"
	"github.com/hilrun/hilrun/pkg/redact"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
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
	// Files opens the files the session names: the sequence file :next
	// steps through, the file :record writes. The zero policy opens none.
	Files files.Policy
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
	// Secrets are the session's secrets: a typed line sends ${name} of
	// one, and neither what the session prints nor its history nor a
	// :record file holds a value (Bench's consoles mask the device's
	// output with them too).
	Secrets *redact.Set
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
	closed  bool
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
		s.t = &scriptScreen{in: bufio.NewReader(&chanReader{c: s.input}), out: opts.Out, secrets: opts.Secrets}
	} else {
		t := term.NewTerminal(struct {
			io.Reader
			io.Writer
		}{&chanReader{c: s.input}, opts.Out}, "hilrun> ")
		if opts.History != nil {
			t.History = secretHistory{History: opts.History, s: s}
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
		s.fileSeq = fileStepNodes(opts.Files, opts.Seq.File)
	}
	go s.pump()
	// The watch ends before the consoles close: their closing is not a
	// device that went away.
	watchCtx, cancelWatch := context.WithCancel(ctx)
	watching := make(chan struct{})
	stopWatch := func() {
		cancelWatch()
		<-watching
	}
	defer stopWatch()
	go func() {
		defer close(watching)
		s.watchConnections(watchCtx)
	}()
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
	// Closed here, so that what a console could not send is said, and
	// a script's end counts it.
	stopWatch()
	s.close()
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
	// secrets are shown as ***name*** in the echo of a line that holds
	// a value.
	secrets *redact.Set
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
	fmt.Fprintf(s, "hilrun> %s\n", s.secrets.String(line))
	return line, nil
}
