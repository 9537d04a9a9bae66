package process

import (
	"errors"
	"fmt"

	"github.com/hilrun/hilrun/pkg/gate/environ"
)

// Purpose says what a program is started for; a Policy decides by it.
type Purpose int

const (
	// HostCommand is a program a sequence, a bench or a request names:
	// exec and power steps, build and upload tools, PlatformIO.
	HostCommand Purpose = iota + 1
	// DebugServer is a debugger server launched for a probe (OpenOCD).
	DebugServer
	// Emulator is an emulated board (QEMU).
	Emulator
	// Camera is the program that takes a camera's pictures (ffmpeg).
	Camera
)

func (p Purpose) String() string {
	switch p {
	case HostCommand:
		return "host command"
	case DebugServer:
		return "debugger server"
	case Emulator:
		return "emulator"
	case Camera:
		return "camera program"
	}
	return fmt.Sprintf("purpose %d", int(p))
}

// Start is a program about to start, as a Policy sees it.
type Start struct {
	Purpose Purpose
	// Path is the program file found; Args are its arguments with Args[0]
	// as written.
	Path string
	Args []string
	// Dir is its working folder; "" is hilrun's own.
	Dir string
	// Env is the whole environment it gets.
	Env []string
}

// Policy says which programs may start, and with what environment.
// The zero Policy starts nothing: a caller that forgot to pass one fails
// loudly instead of starting what nobody allowed.
type Policy struct {
	// Env is the environment every program starts with; the entries a
	// start adds of its own come after it (and win).
	Env environ.Env
	// Allow is asked before every start; an error refuses it. Use Permit
	// for a policy that allows every start.
	Allow func(Start) error
}

// ErrRefused is wrapped by every refusal of a Policy without an Allow.
var ErrRefused = errors.New("refused by the process policy")

// Permit is the policy of a user's own command line: every program may
// start, with env (environ.Host for the user's own).
func Permit(env environ.Env) Policy {
	return Policy{Env: env, Allow: func(Start) error { return nil }}
}
