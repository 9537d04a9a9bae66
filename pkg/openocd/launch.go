package openocd

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hilrun/hilrun/pkg/gate/dial"
	"github.com/hilrun/hilrun/pkg/gate/process"
	"github.com/hilrun/hilrun/pkg/proc/child"
)

// DefaultStopGrace is how long Stop waits after SIGTERM before it kills
// OpenOCD.
const DefaultStopGrace = 3 * time.Second

// LaunchConfig describes an OpenOCD process.
type LaunchConfig struct {
	// Binary is the openocd executable, a path or a name looked up in
	// PATH; "" means "openocd".
	Binary string
	// Configs are configuration files passed with -f, in order, such as
	// "interface/stlink.cfg" and "target/stm32f4x.cfg".
	Configs []string
	// Commands are passed with -c after the configuration files, such as
	// "init" or "reset halt".
	Commands []string
	// AdapterSerial, if set, selects the adapter by serial number
	// ("adapter serial X"), for benches with several probes.
	AdapterSerial string
	// Args are extra arguments, after all the others.
	Args []string
	// Dir is OpenOCD's working directory; "" means hilrun's. Relative
	// configuration and image paths resolve against it.
	Dir string
	// Env holds KEY=value entries added to the environment of Procs for
	// OpenOCD. OpenOCD saves each telnet session's command history to
	// $HOME/.openocd_history when it ends; HOME=/some/dir keeps hilrun's
	// requests out of the user's history (but also hides ~/.openocd from
	// OpenOCD's script search path).
	Env []string
	// Procs is the process gate's policy OpenOCD starts under; its
	// environment is OpenOCD's (Env is added to it): a server that
	// launches OpenOCD for its clients passes a minimal one, so no secret
	// of its own reaches OpenOCD's Tcl ($::env). The zero policy starts
	// nothing.
	Procs process.Policy
	// Dial is the dial gate's policy hilrun connects to the launched
	// OpenOCD through, on the loopback ports it announces (dial.Launched).
	Dial dial.Policy
	// LogFile, if set, receives everything OpenOCD prints on stdout and
	// stderr, appended.
	LogFile string
	// StopGrace is how long Stop waits after SIGTERM before it kills the
	// process; 0 means DefaultStopGrace.
	StopGrace time.Duration
	// Transport is the server sessions use: 0 means OpenOCD's Tcl RPC
	// server on a free port, or its telnet server when the Tcl server
	// does not answer (a configuration file disabled it, say); TclRPC
	// requires the Tcl server; Telnet disables it.
	Transport Transport
}

// Process is a running OpenOCD whose telnet server, and unless
// LaunchConfig.Transport says otherwise its Tcl RPC server, listen on free
// ports of 127.0.0.1. Its GDB server is disabled. It runs in its own
// process group, which Stop ends; on Linux it is also killed if hilrun
// dies.
type Process struct {
	child   *child.Process
	dial    dial.Policy
	addr    string // the telnet server's
	tclAddr string // the Tcl RPC server's, "" when disabled
	nonce   string // the value of ::_hilrun_launch, telling this OpenOCD from others
	rpc     bool   // the Tcl RPC server answered
	rpcErr  error  // why sessions use telnet instead, when they do

	mu      sync.Mutex
	port    string // the telnet port OpenOCD announced
	tclPort string // the Tcl port OpenOCD announced
}

// Launch starts OpenOCD and waits until its telnet server answers. ctx
// bounds the start only: the process runs until Stop. If OpenOCD exits
// first, the error quotes its last output lines ("Error: open failed").
func Launch(ctx context.Context, cfg LaunchConfig) (*Process, error) {
	if cfg.Binary == "" {
		cfg.Binary = "openocd"
	}
	if cfg.StopGrace <= 0 {
		cfg.StopGrace = DefaultStopGrace
	}
	// A port found free may be taken before OpenOCD binds it: then
	// OpenOCD exits saying so, and other ports are tried.
	const attempts = 3
	for i := 1; ; i++ {
		ports, err := freePorts(2)
		if err != nil {
			return nil, fmt.Errorf("launch openocd: find a free port: %w", err)
		}
		if cfg.Transport == Telnet {
			ports[1] = 0
		}
		p, err := start(cfg, ports[0], ports[1])
		if err != nil {
			return nil, err
		}
		err = p.waitReady(ctx)
		if err == nil && ports[1] != 0 {
			err = p.checkRPC(ctx, cfg.Transport == TclRPC)
		}
		if err == nil {
			return p, nil
		}
		p.Stop()
		if i < attempts && p.child.Contains("couldn't bind ") {
			continue
		}
		return nil, err
	}
}

// argv returns OpenOCD's arguments for a telnet server on port and a Tcl
// RPC server on tclPort (0: none).
func (cfg *LaunchConfig) argv(port, tclPort int, nonce string) []string {
	// hilrun's settings come first, so that they hold even for a
	// configuration file that runs init.
	tcl := "disabled"
	if tclPort != 0 {
		tcl = strconv.Itoa(tclPort)
	}
	a := []string{
		"-c", "bindto 127.0.0.1",
		"-c", "telnet_port " + strconv.Itoa(port),
		"-c", "gdb_port disabled",
		"-c", "tcl_port " + tcl,
	}
	if cfg.AdapterSerial != "" {
		a = append(a, "-c", "adapter serial "+tclWord(cfg.AdapterSerial))
	}
	for _, f := range cfg.Configs {
		a = append(a, "-f", f)
	}
	if tclPort != 0 {
		// A configuration file may have disabled the Tcl server, as the
		// virtual board's does: enable it again, unless the file ran
		// init, after which the port cannot change. The nonce tells
		// this OpenOCD's Tcl server from anything else on its port.
		a = append(a, "-c", fmt.Sprintf("if {[catch {command mode} _m] || $_m eq {config}} {catch {tcl_port %d}}; set ::_hilrun_launch %s; list", tclPort, nonce))
	}
	for _, c := range cfg.Commands {
		a = append(a, "-c", c)
	}
	return append(a, cfg.Args...)
}

func start(cfg LaunchConfig, port, tclPort int) (*Process, error) {
	p := &Process{
		addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		dial: cfg.Dial,
	}
	if tclPort != 0 {
		p.tclAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(tclPort))
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, fmt.Errorf("launch openocd: %w", err)
		}
		p.nonce = hex.EncodeToString(b[:])
	}
	spec := process.Spec{Purpose: process.DebugServer, Argv: append([]string{cfg.Binary}, cfg.argv(port, tclPort, p.nonce)...), Dir: cfg.Dir, Env: cfg.Env}
	c, err := child.Start(cfg.Procs, spec, child.Config{
		Name:      "openocd",
		OnLine:    p.sawLine,
		Important: func(l string) bool { return strings.HasPrefix(l, "Error") },
		LogFile:   cfg.LogFile,
		Grace:     cfg.StopGrace,
	})
	if err != nil {
		return nil, fmt.Errorf("launch openocd: %w", err)
	}
	p.child = c
	return p, nil
}

// listening matches the line OpenOCD prints when its telnet or Tcl
// server listens.
var listening = regexp.MustCompile(`Listening on port ([0-9]+) for (telnet|tcl) connections`)

// sawLine follows OpenOCD's output: should a configuration file have
// moved a port, the port it announces is the one to use.
func (p *Process) sawLine(line string) {
	if m := listening.FindStringSubmatch(line); m != nil {
		p.mu.Lock()
		if m[2] == "tcl" {
			p.tclPort = m[1]
		} else {
			p.port = m[1]
		}
		p.mu.Unlock()
	}
}

// rpcCheckTime bounds how long Launch waits for the Tcl RPC server of an
// OpenOCD whose telnet server is ready, before it settles for telnet:
// only something other than that OpenOCD on its port takes that long.
const rpcCheckTime = 10 * time.Second

// checkRPC checks that the Tcl RPC server answers and belongs to this
// OpenOCD. Unless required, a server that does not is noted in rpcErr and
// sessions use telnet.
func (p *Process) checkRPC(ctx context.Context, required bool) error {
	err := p.rpcAnswers(ctx)
	switch {
	case err == nil:
		p.rpc = true
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("launch openocd: %w", err)
	case required:
		return fmt.Errorf("launch openocd: its Tcl RPC server: %w%s", err, p.child.LastWords())
	}
	p.rpcErr = err
	return nil
}

func (p *Process) rpcAnswers(ctx context.Context) error {
	if p.child.Contains("tcl server disabled") {
		return errors.New("a configuration file disabled the Tcl server (tcl_port disabled)")
	}
	ctx, cancel := context.WithTimeout(ctx, rpcCheckTime)
	defer cancel()
	s, err := Dial(ctx, JoinAddr(p.tclAddrNow(), TclRPC), withGate(p.dial, dial.Launched))
	if err != nil {
		return err
	}
	defer s.Close()
	v, err := s.Command(ctx, "set ::_hilrun_launch")
	if err != nil {
		return err
	}
	if v != p.nonce {
		return fmt.Errorf("the server at %s is another OpenOCD's", p.tclAddrNow())
	}
	return nil
}

// waitReady waits until the telnet server greets a connection with its
// prompt: OpenOCD listens before it initialises the adapter and the
// target, and greets only after.
func (p *Process) waitReady(ctx context.Context) error {
	start := time.Now()
	backoff := 5 * time.Millisecond
	var last error
	for {
		select {
		case <-p.child.Done():
			return fmt.Errorf("launch openocd: %w", p.child.Exited("before its telnet server was ready"))
		case <-ctx.Done():
			msg := fmt.Sprintf("launch openocd: its telnet server at %s was not ready after %v", p.TelnetAddr(), time.Since(start).Round(time.Millisecond))
			if last != nil {
				msg += " (" + last.Error() + ")"
			}
			return fmt.Errorf("%s: %w%s", msg, ctx.Err(), p.child.LastWords())
		default:
		}
		err := p.greeted(ctx)
		if err == nil {
			return nil
		}
		last = err
		select {
		case <-time.After(backoff):
		case <-p.child.Done():
		case <-ctx.Done():
		}
		backoff = min(2*backoff, 200*time.Millisecond)
	}
}

// greeted connects to the telnet server and reads until its prompt.
func (p *Process) greeted(ctx context.Context) error {
	c, err := p.dial.Dial(ctx, dial.Launched, "tcp", p.TelnetAddr())
	if err != nil {
		return err
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(aLongTimeAgo) })
	defer stop()
	exited := make(chan struct{})
	defer close(exited)
	go func() {
		select {
		case <-p.child.Done():
			c.SetDeadline(aLongTimeAgo)
		case <-exited:
		}
	}()
	var got []byte
	buf := make([]byte, 512)
	for !bytes.Contains(got, []byte("> ")) {
		n, err := c.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			return fmt.Errorf("no prompt: %w", err)
		}
	}
	return nil
}

// TelnetAddr returns the address of OpenOCD's telnet server, HOST:PORT.
func (p *Process) TelnetAddr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.port != "" {
		return net.JoinHostPort("127.0.0.1", p.port)
	}
	return p.addr
}

// TclAddr returns the address of OpenOCD's Tcl RPC server, HOST:PORT, or
// "" when sessions cannot use it (RPCErr says why).
func (p *Process) TclAddr() string {
	if !p.rpc {
		return ""
	}
	return p.tclAddrNow()
}

func (p *Process) tclAddrNow() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tclPort != "" {
		return net.JoinHostPort("127.0.0.1", p.tclPort)
	}
	return p.tclAddr
}

// RPCErr says why sessions use the telnet server although LaunchConfig
// asked for the Tcl RPC server where available; nil when they use the Tcl
// RPC server or were told to use telnet.
func (p *Process) RPCErr() error { return p.rpcErr }

// Transport returns the server Dial connects to.
func (p *Process) Transport() Transport {
	if p.rpc {
		return TclRPC
	}
	return Telnet
}

// Addr returns the address Dial connects to, as openocd.Dial reads it:
// tcl://HOST:PORT for the Tcl RPC server, HOST:PORT for telnet.
func (p *Process) Addr() string {
	if p.rpc {
		return JoinAddr(p.TclAddr(), TclRPC)
	}
	return p.TelnetAddr()
}

// Dial opens a Session with the process: over its Tcl RPC server, or its
// telnet server when that is what Transport says.
func (p *Process) Dial(ctx context.Context, opts ...Option) (*Session, error) {
	return Dial(ctx, p.Addr(), append([]Option{withGate(p.dial, dial.Launched)}, opts...)...)
}

// Pid returns the process ID.
func (p *Process) Pid() int { return p.child.Pid() }

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.child.Done() }

// Err returns how the process exited, once Done is closed; nil before.
func (p *Process) Err() error { return p.child.Err() }

// Output returns the last lines OpenOCD printed.
func (p *Process) Output() string { return p.child.Output() }

// Stop ends OpenOCD and everything in its process group: SIGTERM, then
// SIGKILL if it has not exited after LaunchConfig.StopGrace. It returns
// once the process has exited. Stop is idempotent and returns nil: an exit
// forced by Stop is not an error.
func (p *Process) Stop() error {
	p.child.Stop(context.Background())
	return nil
}

// LogErr returns nil when LaunchConfig.LogFile holds all OpenOCD printed
// (or there is none), else an error saying how many bytes it lost, as on a
// full disk. Call it after Stop for the final word.
func (p *Process) LogErr() error { return p.child.LogErr() }

// freePorts returns n distinct TCP ports of 127.0.0.1 that were free a
// moment ago.
func freePorts(n int) ([]int, error) {
	ports := make([]int, n)
	for i := range ports {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer ln.Close()
		ports[i] = ln.Addr().(*net.TCPAddr).Port
	}
	return ports, nil
}
