package process

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// ErrNotFound is wrapped by the error of a program that is not installed
// (not on the policy's PATH, or no such file).
var ErrNotFound = exec.ErrNotFound

// ErrWaitDelay is Wait's error when the program exited but something it
// left kept its output open past Spec.WaitDelay.
var ErrWaitDelay = exec.ErrWaitDelay

// ExitError is Wait's error for a program that ran and did not exit 0.
type ExitError = exec.ExitError

// Spec is a program to start.
type Spec struct {
	Purpose Purpose
	// Argv is the program and its arguments. A bare name is looked up on
	// the PATH of the policy's environment; a relative path with a slash
	// (./build.sh) is taken in Dir.
	Argv []string
	// Dir is the working folder; "" is hilrun's own.
	Dir string
	// Env is added after the policy's environment.
	Env []string
	// Stdin, Stdout and Stderr are the program's; nil is the null device.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Watch runs the program under a watcher that kills its whole process
	// group, its own children included, when hilrun dies, even of SIGKILL;
	// without it only the group's leader dies with hilrun (Linux).
	Watch bool
	// WaitDelay bounds how long Wait waits, once the program exited, for
	// what it left holding its output; 0 means no bound.
	WaitDelay time.Duration
}

// Proc is a program that started.
type Proc struct {
	cmd *exec.Cmd
}

// Start starts s once the policy allowed it: the program found, its
// environment the policy's and then s.Env, in a process group of its own.
// The error wraps ErrNotFound for a program that is not there, or the
// policy's refusal.
func (p Policy) Start(s Spec) (*Proc, error) {
	if len(s.Argv) == 0 {
		return nil, errors.New("start: empty command")
	}
	if p.Allow == nil {
		return nil, fmt.Errorf("start %s (%s): %w: hilrun was wired without one", s.Argv[0], s.Purpose, ErrRefused)
	}
	env := append(p.Env.List(), s.Env...)
	path, err := p.lookPath(s.Argv[0], s.Dir, env)
	if err != nil {
		return nil, err
	}
	if err := p.Allow(Start{Purpose: s.Purpose, Path: path, Args: append([]string(nil), s.Argv...), Dir: s.Dir, Env: append([]string(nil), env...)}); err != nil {
		return nil, err
	}
	cmd := exec.Command(path, s.Argv[1:]...)
	cmd.Args[0] = s.Argv[0]
	cmd.Dir = s.Dir
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s.Stdin, s.Stdout, s.Stderr
	cmd.WaitDelay = s.WaitDelay
	if s.Watch {
		prepare(cmd)
	} else {
		cmd.SysProcAttr = sysProcAttr()
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &Proc{cmd: cmd}, nil
}

// LookPath finds the program name as Start would: on the PATH of the
// policy's environment, or in dir for a relative path with a slash.
func (p Policy) LookPath(name, dir string) (string, error) {
	return p.lookPath(name, dir, p.Env.List())
}

func (p Policy) lookPath(name, dir string, env []string) (string, error) {
	if strings.ContainsRune(name, filepath.Separator) {
		if dir != "" && !filepath.IsAbs(name) {
			name = filepath.Join(dir, name)
		}
		if err := executable(name); err != nil {
			return "", &exec.Error{Name: name, Err: err}
		}
		return name, nil
	}
	path := ""
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], "PATH="); ok {
			path = v
			break
		}
	}
	for _, d := range filepath.SplitList(path) {
		if d == "" || !filepath.IsAbs(d) {
			// An empty or relative PATH entry would find a program in
			// hilrun's working folder: never.
			continue
		}
		f := filepath.Join(d, name)
		if executable(f) == nil {
			return f, nil
		}
	}
	return "", &exec.Error{Name: name, Err: exec.ErrNotFound}
}

func executable(f string) error {
	fi, err := os.Stat(f)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("%w (not an executable file)", fs.ErrPermission)
	}
	return nil
}

// Pid is the program's process ID, also its process group's.
func (pr *Proc) Pid() int { return pr.cmd.Process.Pid }

// Wait waits for the program to exit; an *ExitError for one that did not
// exit 0, ErrWaitDelay when something it left held its output too long.
func (pr *Proc) Wait() error { return pr.cmd.Wait() }

// State is how the program exited, once Wait returned; nil before.
func (pr *Proc) State() *os.ProcessState { return pr.cmd.ProcessState }

// Terminate asks the program's group to exit (SIGTERM).
func (pr *Proc) Terminate() { Terminate(pr.cmd.Process) }

// Kill kills the program's group (SIGKILL); harmless once it is gone.
func (pr *Proc) Kill() error { return Kill(pr.cmd.Process) }
