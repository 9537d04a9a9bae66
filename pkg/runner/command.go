package runner

// CommandEffect is what a typed debugger command does to the target.
type CommandEffect int

// Effects of typed debugger commands.
const (
	// CommandInfo only reports on the debugger (targets, version, poll).
	CommandInfo CommandEffect = iota
	// CommandRead reads target memory or registers.
	CommandRead
	// CommandControl halts, resumes or resets the target.
	CommandControl
	// CommandWrite writes target memory or a register.
	CommandWrite
)

// TypedCommand is a raw debugger command read word by word, for a policy
// that sends debuggers only commands it understands: what it does, the
// memory it writes, and the command written again from the numbers it
// parsed, so nothing of the text reaches the debugger's interpreter.
type TypedCommand interface {
	Effect() CommandEffect
	// Writes is the memory a write writes: its address and size in
	// bytes; ok is false for a command that writes no memory (a register
	// write is CommandWrite and writes no memory).
	Writes() (addr, size uint64, ok bool)
	String() string
}

// CommandParser reads the raw commands of a bench's Tcl debuggers
// (OpenOCD) as typed ones; the error says why a command is not one.
type CommandParser func(cmd string) (TypedCommand, error)
