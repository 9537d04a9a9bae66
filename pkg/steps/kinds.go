package steps

import (
	"slices"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"
)

// Cap is one thing a step or a tool can do to the bench or the host beyond
// computing. The loader, the runner's dispatch and the MCP server's policy
// all read the kind table below; a policy that meets a step whose kind the
// table does not describe refuses it.
type Cap uint16

// Capabilities.
const (
	// CapDevice talks to a serial console: sends bytes, reads them.
	CapDevice Cap = 1 << iota
	// CapModemLines drives a console's modem lines or sends a break, which
	// reset many boards.
	CapModemLines
	// CapCamera takes pictures with a bench camera.
	CapCamera
	// CapMemRead reads target memory through typed probe operations.
	CapMemRead
	// CapProbeControl halts, resumes or resets the target through its
	// probe.
	CapProbeControl
	// CapMemWrite writes target memory, or flashes or loads an image,
	// through typed probe operations.
	CapMemWrite
	// CapPower switches a board's power with the bench's commands.
	CapPower
	// CapReadFiles reads host files named by the step (ELF files, images,
	// sequences).
	CapReadFiles
	// CapHostExec runs host programs: exec, build and upload commands.
	CapHostExec
	// CapDebugRaw sends the debugger a command as text (an openocd: step
	// OpenOCD runs as Tcl, a monitor: step a GDB stub runs), or has it run
	// a configuration file: both can run host programs.
	CapDebugRaw

	capEnd
)

// Caps lists every capability, in the order the docs present them.
func Caps() []Cap {
	var out []Cap
	for c := Cap(1); c < capEnd; c <<= 1 {
		out = append(out, c)
	}
	return out
}

// capNames are each capability's short name and what it allows.
var capNames = map[Cap][2]string{
	CapDevice:       {"device", "talk to a serial console"},
	CapModemLines:   {"modem-lines", "drive DTR/RTS or send a break (resets many boards)"},
	CapCamera:       {"camera", "take pictures with a bench camera"},
	CapMemRead:      {"mem-read", "read target memory (typed probe operations)"},
	CapProbeControl: {"probe-control", "halt, resume or reset the target through its probe"},
	CapMemWrite:     {"mem-write", "write target memory, flash or load an image (typed probe operations)"},
	CapPower:        {"power", "switch a board's power with the bench file's commands"},
	CapReadFiles:    {"read-files", "read host files (ELF files, images, sequence files)"},
	CapHostExec:     {"host-exec", "run host programs (exec, build and upload commands)"},
	CapDebugRaw:     {"debug-raw", "raw debugger commands (OpenOCD Tcl, GDB monitor commands) and configuration files"},
}

// String is the capability's short name, or the names of a set joined
// with "+".
func (c Cap) String() string {
	if c == 0 {
		return "none"
	}
	var names []string
	for _, one := range Caps() {
		if c&one != 0 {
			names = append(names, capNames[one][0])
		}
	}
	return strings.Join(names, "+")
}

// Doc says what the capability allows, for people.
func (c Cap) Doc() string { return capNames[c][1] }

// Has reports whether c includes every capability of o.
func (c Cap) Has(o Cap) bool { return c&o == o }

// KindSpec describes one step kind: the keys that make a step of it, the
// keys it accepts, and what it can do. It is the one description the
// loader, the runner and the MCP policy read.
type KindSpec struct {
	Kind Kind
	// Keys make a step of this kind; the first is how the docs write it.
	Keys []string
	// Allowed are the other keys such a step accepts (name and id are
	// accepted by every step).
	Allowed []string
	// Caps is everything a step of this kind may do; StepCaps narrows it
	// for one step.
	Caps Cap
	// Doc says in a few words what the kind does.
	Doc string
	// On is what the step's to: (or probe:) names.
	On Target
	// Note says when a step of the kind does less than Caps.
	Note string
	// Raw is the raw command ability the step's probe needs: RawNone for
	// typed operations only.
	Raw RawNeed
	// caps, when set, says what one step of the kind does, which may be
	// less than Caps (an upload through the probe runs no host program).
	caps func(*Step) Cap

	// Every kind is described in a file of its own (kind_*.go), which
	// carries its decoding, checks and title here and adds it with
	// registerKind; the loader, validate and Title read them, so a kind
	// touches no other file of this package.

	// Example is the step in JSON, for the MCP tool's help.
	Example string
	// decode reads key (one of Keys or Allowed) into s; false leaves the
	// key to the common keys (name, id, to, timeout, ...).
	decode func(d *decoder, s *Step, key string, v *yaml.Node) bool
	// finish is called once every key of a step is decoded: it checks
	// what depends on several keys, and the keys the step needs.
	finish func(d *decoder, s *Step, keys stepKeys)
	// check is validate's look at one step: variables it reads, values
	// it needs.
	check func(v *validator, s *Step)
	// title is the step's title when it has no name; a long title is the
	// kind's to clip.
	title func(s *Step) string
}

// kindOrder is the order the docs present the kinds in: the capability
// matrix, hilrun schema and the messages that list kinds follow it. A
// kind not listed here comes after these, in the order the kind files
// register (their names' order).
var kindOrder = []Kind{
	KindSend, KindExpect, KindDelay, KindCapture, KindAssert, KindSet, KindGroup, KindRepeat, KindParallel, KindBarrier,
	KindMemRead, KindMemWrite, KindMemPoll, KindHalt, KindResume, KindReset, KindOpenOCD, KindMonitor,
	KindBuild, KindUpload, KindPIOTest,
	KindCamera, KindLines, KindBreak, KindResetSequence, KindExec, KindPower,
}

// registerKind adds a kind to kindTable, in its place in kindOrder. It is
// called from the kind file's init.
func registerKind(k KindSpec) {
	rank := func(k Kind) int {
		if i := slices.Index(kindOrder, k); i >= 0 {
			return i
		}
		return len(kindOrder)
	}
	at := len(kindTable)
	for i, have := range kindTable {
		if have.Kind == k.Kind {
			panic("steps: kind " + string(k.Kind) + " registered twice")
		}
		if at == len(kindTable) && rank(have.Kind) > rank(k.Kind) {
			at = i
		}
	}
	kindTable = slices.Insert(kindTable, at, k)
}

// RawNeed is what a step needs of its probe beyond typed operations.
type RawNeed int

// Raw command needs.
const (
	// RawNone: typed operations are enough.
	RawNone RawNeed = iota
	// RawAny: raw commands in the probe's own language (OpenOCD Tcl, a
	// GDB stub's monitor commands).
	RawAny
	// RawTcl: raw commands that OpenOCD runs as Tcl.
	RawTcl
)

// Target is what a step acts on by name.
type Target int

// Targets.
const (
	OnNothing Target = iota
	// OnDevice: to: names a device (a serial console).
	OnDevice
	// OnProbe: probe: (or to:) names a debug probe.
	OnProbe
)

// kindTable is every step kind hilrun knows, in the order of kindOrder:
// each kind file adds its own with registerKind.
var kindTable []KindSpec

// kindKeys maps the key that makes a step what it is to its kind. capture
// is a serial capture here; the loader tells camera captures apart. It is
// made on first use, after every kind file's init has registered its
// kind.
var kindKeys = lazyMap(func() map[string]Kind {
	m := map[string]Kind{}
	for _, k := range kindTable {
		for _, key := range k.Keys {
			m[key] = k.Kind
		}
	}
	return m
})

// commonKeys are the keys every step accepts.
var commonKeys = []string{"name", "id"}

// kindAllowed are the keys a step of each kind accepts besides name and id.
var kindAllowed = lazyMap(func() map[Kind][]string {
	m := map[Kind][]string{}
	for _, k := range kindTable {
		m[k.Kind] = append(slices.Clone(k.Keys), k.Allowed...)
	}
	return m
})

// lazyMap returns a function that makes a map with mk once, on first use.
func lazyMap[K comparable, V any](mk func() map[K]V) func() map[K]V {
	return sync.OnceValue(mk)
}

// StepKinds lists the step kinds in the order the docs present them.
func StepKinds() []Kind {
	var out []Kind
	for _, k := range kindTable {
		out = append(out, k.Kind)
	}
	return out
}

// Kinds returns the description of every step kind.
func Kinds() []KindSpec { return slices.Clone(kindTable) }

// LookupKind returns the description of kind k.
func LookupKind(k Kind) (KindSpec, bool) {
	s, ok := kindSpecs()[k]
	return s, ok
}

// kindSpecs finds a kind's description by name: Title, validate and the
// policy ask for one on every step.
var kindSpecs = lazyMap(func() map[Kind]KindSpec {
	m := map[Kind]KindSpec{}
	for _, k := range kindTable {
		m[k.Kind] = k
	}
	return m
})

// StepCaps returns what step s can do by itself (not its children), and
// false when its kind is not in the table: a policy must refuse such a
// step. A branch of a parallel: step does nothing by itself.
func StepCaps(s *Step) (Cap, bool) {
	if s.Kind == KindBranch {
		return 0, true
	}
	k, ok := LookupKind(s.Kind)
	if !ok {
		return 0, false
	}
	if k.caps != nil {
		return k.caps(s), true
	}
	return k.Caps, true
}

// KeyKind returns the kind a step key makes, with ok false for keys that
// make no step.
func KeyKind(key string) (Kind, bool) {
	k, ok := kindKeys()[key]
	return k, ok
}

// IsContainer reports whether steps of kind k hold other steps and finish
// after them (group, repeat, parallel and its branches): reports count
// the steps inside, not these.
func IsContainer(k Kind) bool {
	return k == KindGroup || k == KindRepeat || k == KindParallel || k == KindBranch
}

// IsProbeKind reports whether steps of kind k talk to a debug probe.
func IsProbeKind(k Kind) bool {
	s, ok := LookupKind(k)
	return ok && s.On == OnProbe
}
