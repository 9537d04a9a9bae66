// Package steps is hilrun's sequence model: the file format, its decoding
// from YAML or JSON with positions, and validation. It does no I/O beyond
// reading the file it is asked to load.
package steps

import (
	"time"

	"github.com/expr-lang/expr/vm"
	"github.com/hilrun/hilrun/pkg/stream"
)

// Kind names what a step does.
type Kind string

// DefaultProbe is the name of the probe a sequence without a probes
// section uses.
const DefaultProbe = "target"

// DefaultExpectTimeout is how long an expect waits when neither the step nor
// the sequence says.
const DefaultExpectTimeout = 5 * time.Second

// DefaultDevice is the name of the device a sequence without a devices
// section talks to.
const DefaultDevice = "console"

// Sequence is one loaded and validated sequence file.
type Sequence struct {
	File        string
	Name        string
	Description string
	// Devices in the order declared. A sequence without a devices section
	// has one, DefaultDevice, with no port: the bench, --port or --sim bind it.
	Devices   []*Device
	Vars      []*Var
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
	Pos     Pos
}

// Probe returns the probe called name, or nil.
func (s *Sequence) Probe(name string) *Probe {
	for _, p := range s.Probes {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// Probe is a debug probe: reached through OpenOCD (a running OpenOCD's
// telnet address, or an OpenOCD that hilrun launches for the run), or
// through a GDB remote stub (one running, or the GDB server of a QEMU that
// hilrun launches for the run: Launch.QEMU). Backend says which.
type Probe struct {
	Name string
	// OpenOCD is host:port of a running OpenOCD's telnet server.
	OpenOCD string
	Launch  *Launch
	// GDB is host:port of a GDB remote stub (QEMU's gdbstub, pyOCD's or
	// J-Link's GDB server), or the serial port of a probe that speaks the
	// GDB remote protocol itself (a Black Magic Probe's /dev/ttyACM0).
	GDB string
	// GDBAttach is how the target behind GDB stands when hilrun attaches
	// (GDBAttachRunning, GDBAttachHalted, GDBAttachAuto); "" means auto,
	// and lets a binding that names no mode keep this one.
	GDBAttach string
	// ELF is the default file for symbol lookups on this probe.
	ELF string
	// Implicit is true for a probe only named by steps.
	Implicit bool
	Pos      Pos
}

// Probe backends: how a probe is reached (Probe.Backend). internal/engine
// registers how each is opened.
const (
	BackendOpenOCD = "openocd"
	BackendGDB     = "gdb"
)

// Backend says how p is reached: BackendOpenOCD for openocd: and launch:,
// BackendGDB for gdb: and launch: {qemu: ...}, "" while nothing binds it.
func (p *Probe) Backend() string {
	switch {
	case p.GDB != "" || p.LaunchesQEMU():
		return BackendGDB
	case p.OpenOCD != "" || p.Launch != nil:
		return BackendOpenOCD
	}
	return ""
}

// AttachOpenOCD binds p to the running OpenOCD at addr, in place of
// whatever bound it before.
func (p *Probe) AttachOpenOCD(addr string) {
	p.OpenOCD, p.Launch, p.GDB, p.GDBAttach = addr, nil, "", ""
}

// LaunchesQEMU reports whether hilrun starts a QEMU for p, whose GDB
// server p is then attached to.
func (p *Probe) LaunchesQEMU() bool { return p.Launch != nil && p.Launch.QEMU != nil }

// AttachGDB binds p to the GDB remote stub at addr (HOST:PORT, a serial
// port or a Unix socket), in place of whatever bound it before. The
// attach mode is kept.
func (p *Probe) AttachGDB(addr string) {
	p.OpenOCD, p.Launch, p.GDB = "", nil, addr
}

// Launch says how to start the server a probe talks to: OpenOCD, or with
// QEMU set a QEMU (and none of the OpenOCD settings).
type Launch struct {
	Binary        string
	Config        []string
	AdapterSerial string
	Commands      []string
	Args          []string
	QEMU          *QEMULaunch
}

// QEMULaunch says how to start QEMU as a virtual board for a probe: the
// probe attaches to QEMU's GDB server, and the device named Console talks
// to the guest's first serial port. Paths are absolute once loaded
// (relative to the file that names them).
type QEMULaunch struct {
	// Binary is the QEMU program; "" means qemu-system-arm.
	Binary string
	// Machine is QEMU's -machine, such as mps2-an385 or virt. Required.
	Machine string
	// Kernel (-kernel) and BIOS (-bios) are the images the machine runs;
	// at least one is given.
	Kernel, BIOS string
	// Args are more arguments for QEMU, after hilrun's own.
	Args []string
	// Console names the device bound to the guest's first serial port;
	// "" binds none.
	Console string
	Pos     Pos
}

// OnFailure says what a sequence does after a step fails.
type OnFailure string

// OnFailure values.
const (
	Stop     OnFailure = "stop"
	Continue OnFailure = "continue"
)

// Device returns the device called name, or nil.
func (s *Sequence) Device(name string) *Device {
	for _, d := range s.Devices {
		if d.Name == name {
			return d
		}
	}
	return nil
}

// Device is a serial console the sequence talks to, by logical name.
type Device struct {
	Name string
	// Port is the path of the serial device; empty when USB or the bench
	// binds it.
	Port string
	// PortFrom says where Port or USB came from, for messages: the
	// position of the device in its file ("seq.yaml:4:3"), "bench file
	// hilrun.bench.yaml:3:3", "--port dut=/dev/ttyUSB0", "--sim"; "" when
	// not known.
	PortFrom    string
	USB         *USBMatch
	Baud        int
	DataBits    int
	Parity      string
	StopBits    string
	FlowControl string
	LineEnding  string
	DTR, RTS    *bool
	Reconnect   bool
	// Settle is how long a regexp match that bytes still arriving could
	// change is held for silence on this device (see stream.WithSettle);
	// nil means the default, stream.DefaultSettle.
	Settle *time.Duration
	// SyncTimeout bounds the console sync before the first send on a
	// connection the run opened (see Prompt); 0 means the sequence's
	// expect timeout.
	SyncTimeout time.Duration
	// Prompt is the device's command prompt, such as "=> " for U-Boot; nil
	// when it has none. With a prompt, a send (not send_ctrl) waits until
	// the device is back at its prompt after the previous command, and a
	// send's expect ends at the next prompt: see Step.WaitPrompt and
	// Step.UntilPrompt. A prompt counts only at the start of a line. The
	// first send on a connection the run opened syncs first: it takes in
	// what the device printed, and unless that ends with the prompt, sends
	// the line ending and waits for it (SyncTimeout).
	Prompt *PatternSpec
	// Echo says the device echoes the text it receives, as shells do: a
	// text send waits for the echo of its line, checks it, and its expect
	// starts after it.
	Echo bool
	// Buffer is how many received bytes the device's console keeps for
	// matching, in bytes; 0 means stream.DefaultCapacity (1 MiB). A regexp
	// match can be at most this long.
	Buffer int
	// Implicit is true for a device made from a step's `to: /dev/...`.
	Implicit bool
	Pos      Pos
}

// USBMatch finds a serial port by USB identity. VID and PID are hex strings
// such as "0483"; Serial is optional.
type USBMatch struct {
	VID, PID, Serial string
}

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

	// group and repeat.
	Steps []*Step
	Count int
	Every time.Duration
	For   time.Duration
	As    string
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

func clip(s string) string {
	const max = 60
	r := []rune(s)
	if len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}

// Walk calls fn for every step of seq, finally steps included, parents
// before their children.
func Walk(seq *Sequence, fn func(*Step)) {
	var walk func([]*Step)
	walk = func(ss []*Step) {
		for _, s := range ss {
			fn(s)
			walk(s.Steps)
		}
	}
	walk(seq.Steps)
	walk(seq.Finally)
}
