// Package steps is hilrun's sequence model: the file format, its decoding
// from YAML or JSON with positions, and validation. It does no I/O beyond
// reading the file it is asked to load.
package steps

import (
	"time"

	"github.com/expr-lang/expr/vm"

	"github.com/hilrun/hilrun/pkg/stream"
)

// Kind names what a step does. Each kind's constant and description
// (KindSpec) are in its kind_*.go file.
type Kind string

// DefaultExpectTimeout is how long an expect waits when neither the step nor
// the sequence says.
const DefaultExpectTimeout = 5 * time.Second

// Sequence is one loaded and validated sequence file.
type Sequence struct {
	File        string
	Name        string
	Description string
	// Devices in the order declared. A sequence without a devices section
	// has one, DefaultDevice, with no port: the bench, --port or --sim bind it.
	Devices []*Device
	Vars    []*Var
	// Secrets are the names under secrets:, whose values the bench file or
	// --secret give; only sends and commands may use them (see secrets.go).
	Secrets   []*SecretName
	OnFailure OnFailure
	// Timeout bounds the whole sequence, finally steps excepted; 0 = none.
	Timeout time.Duration
	// ExpectTimeout is the default timeout of expects in this sequence.
	ExpectTimeout time.Duration
	FailOn        []*PatternSpec
	// FilterResponses makes expects match only lines that begin with ">",
	// the response marker of firmware that interleaves logs with replies
	// (the serial_sequence tool's filter_responses).
	FilterResponses bool
	// Probes in the order declared; like devices, a sequence that uses
	// memory steps without a probes section has one, DefaultProbe, which
	// the bench, --openocd or --sim binds.
	Probes []*Probe
	// Cameras in the order declared, then those only named by steps.
	Cameras []*Camera
	// Power says how to switch the named boards off and on; a bench file's
	// entries replace these.
	Power   map[string]*PowerEntry
	Steps   []*Step
	Finally []*Step
	// Tags are the sequence's tags: -m selects by them, and its groups
	// have them too.
	Tags []string
	// Matrix is the sequence's matrix as written; the loader expands it
	// into one group per case (Step.Case) and leaves it nil.
	Matrix *Matrix
	// Skip, when not "", says why the sequence does not run (deselected
	// by -m, quarantined): its steps are reported skipped with it, and no
	// console or probe opens. Loading leaves it ""; steps.Deselect sets
	// it on a copy.
	Skip string
	// Retry is the sequence's retries: and before_retry:, nil when it
	// says neither.
	Retry *Retry
	Pos   Pos
}

// OnFailure says what a sequence does after a step fails.
type OnFailure string

// OnFailure values.
const (
	Stop     OnFailure = "stop"
	Continue OnFailure = "continue"
)

// Var is a variable declared under vars.
type Var struct {
	Name  string
	Value any
	Pos   Pos
}

// PatternSpec is a pattern as written: literal or RE2, possibly with ${var}
// references that are filled in when the step runs. Values put into a regular
// expression are quoted, so they match literally.
type PatternSpec struct {
	Text   Template
	Regex  bool
	Pos    Pos
	static stream.Pattern
}

// Compile returns the pattern with its references filled in.
func (p *PatternSpec) Compile(lookup Lookup) (stream.Pattern, error) {
	if !p.static.IsZero() {
		return p.static, nil
	}
	quote := func(s string) string { return s }
	if p.Regex {
		quote = regexpQuote
	}
	s, err := p.Text.Expand(lookup, quote)
	if err != nil {
		return stream.Pattern{}, err
	}
	if p.Regex {
		return stream.Regexp(s)
	}
	return stream.Literal(s), nil
}

// String is the pattern as written.
func (p *PatternSpec) String() string {
	if p.Regex {
		return "/" + p.Text.Raw + "/"
	}
	return p.Text.Raw
}

// Expr is a compiled expr-lang expression.
type Expr struct {
	Src     string
	Pos     Pos
	Program *vm.Program
	// Names lists the variables the expression reads, so a failed assert
	// can show their values.
	Names []string
}

// SaveSpec saves part of a match into a variable: Group is a submatch index
// (0 for the whole match), or GroupName a named group.
type SaveSpec struct {
	Var       string
	Group     int
	GroupName string
	Pos       Pos
}

// Step is one step of a sequence. Which fields are used depends on Kind.
type Step struct {
	Kind Kind
	Pos  Pos
	// Name is the step's name as written; Title makes one up when empty.
	Name string
	// ID names the step so expressions can read its result: steps.ID.
	ID string
	// To is the device a serial step talks to, or the probe of a memory
	// or debugger step.
	To string
	// Timeout bounds the step; for expects 0 means the sequence's default.
	Timeout time.Duration
	FailOn  []*PatternSpec
	// Args is what a kind described in a file of its own decoded (see
	// KindSpec's decode): its kind file says the type, such as *LogArgs.
	Args any
	// Settle overrides the device's settle time for this step's expect or
	// capture; nil keeps the device's.
	Settle *time.Duration

	// send: Text (interpolated) or Bytes (send_hex, send_ctrl), then the
	// device's line ending unless LineEnding overrides it.
	Text  *Template
	Bytes []byte
	// Ctrl is true for send_ctrl: a key that never waits for the prompt.
	Ctrl       bool
	LineEnding string
	// WaitPrompt, when false, sends without waiting for the device's
	// prompt; nil means wait (send and send_hex to a device with a
	// prompt; send_ctrl never waits).
	WaitPrompt *bool
	// UntilPrompt says whether an expect ends at the device's next prompt
	// (a device without a prompt has none); nil means it does for a
	// send's expect and does not for a standalone expect.
	UntilPrompt *bool

	// expect, standalone or after a send.
	Expect []*PatternSpec
	Save   []SaveSpec

	// delay.
	Delay time.Duration

	// capture; Save may name one variable for the captured text.
	Capture *CaptureSpec

	// assert. Message is what a failed assert says instead of the
	// expression: text with ${name} (MessageText), or {expr: "..."}
	// (MessageExpr), evaluated when the assert fails.
	Assert      *Expr
	MessageText *Template
	MessageExpr *Expr

	// set.
	Set []*Assignment

	// memory and debugger steps.
	Mem *MemSpec
	// OpenOCD is the command of an openocd step (OpenOCD Tcl), Monitor
	// that of a monitor step (the probe's own raw command); Expect and
	// Save apply to their output. ResetMode is run, halt or init.
	OpenOCD   *Template
	Monitor   *Template
	ResetMode string

	// build and upload.
	Build *BuildSpec

	// camera capture and image checks.
	Camera *CameraSpec

	// lines, break (Delay is the break's length) and reset_sequence.
	Lines         *LinesSpec
	ResetSequence string

	// exec; Expect and Save apply to its output.
	Exec *ExecSpec

	// power.
	Power *PowerSpec

	// group and repeat; a group's Retry is its retries: and
	// before_retry:, nil when it says neither. A parallel step's Steps
	// are its branches (KindBranch), in the order written, and a
	// branch's Steps its own.
	Steps []*Step
	// Finally are a branch's finally steps: they run once the branch's
	// steps ended, however they ended.
	Finally []*Step
	Retry   *Retry
	Count   int
	Every   time.Duration
	For     time.Duration
	As      string

	// Tags are a group's own tags (see Sequence.Tags).
	Tags []string
	// Matrix is a group's matrix as written, which the loader expands
	// into its cases and leaves nil.
	Matrix *Matrix
	// Case, on a group that is a matrix case, are the values the case
	// sets as variables when it starts, in key order. A case that fails
	// does not stop the cases after it; an error or an interrupt does.
	Case []MatrixValue
	// Skip, when not "", says why the group does not run (see
	// Sequence.Skip): it and its steps are reported skipped with it.
	Skip string
}

// Title is the step's name, or a short description of what it does.
func (s *Step) Title() string {
	if s.Name != "" {
		return s.Name
	}
	if k, ok := LookupKind(s.Kind); ok && k.title != nil {
		return k.title(s)
	}
	return string(s.Kind)
}

// clip shortens a title to 60 characters, with an ellipsis.
func clip(s string) string {
	const max = 60
	r := []rune(s)
	if len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}

// Walk calls fn for every step of seq, finally and before_retry steps
// included, parents before their children.
func Walk(seq *Sequence, fn func(*Step)) {
	var walk func([]*Step)
	walk = func(ss []*Step) {
		for _, s := range ss {
			fn(s)
			walk(Children(s))
		}
	}
	walk(seq.Steps)
	walk(seq.Retry.Before())
	walk(seq.Finally)
}
