package openocd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hilrun/hilrun/internal/logfile"
	"github.com/hilrun/hilrun/internal/procgroup"
)

// DefaultStopGrace is how long Stop waits after SIGTERM before it kills
// OpenOCD.
const DefaultStopGrace = 3 * time.Second

// outputLines is how many of OpenOCD's last output lines a Process keeps
// for error messages.
const outputLines = 40

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
	// Env holds KEY=value entries added to hilrun's environment for
	// OpenOCD. OpenOCD saves each telnet session's command history to
	// $HOME/.openocd_history when it ends; HOME=/some/dir keeps hilrun's
	// requests out of the user's history (but also hides ~/.openocd from
	// OpenOCD's script search path).
	Env []string
	// Environ, when not nil, is OpenOCD's whole environment (Env is added
	// to it) instead of hilrun's: a server that launches OpenOCD for its
	// clients passes a minimal one, so no secret of its own reaches
	// OpenOCD's Tcl ($::env).
	Environ []string
	// LogFile, if set, receives everything OpenOCD prints on stdout and
	// stderr, appended.
	LogFile string
	// StopGrace is how long Stop waits after SIGTERM before it kills the
	// process; 0 means DefaultStopGrace.
	StopGrace time.Duration
}

// Process is a running OpenOCD whose telnet server listens on a free port
// of 127.0.0.1. Its GDB and Tcl servers are disabled. It runs in its own
// process group, which Stop ends; on Linux it is also killed if hilrun dies.
type Process struct {
	cmd   *exec.Cmd
	addr  string
	out   *outputRing
	log   *logfile.File
	grace time.Duration

	done    chan struct{} // closed when the process has exited
	waitErr error         // how it exited; set before done closes

	stopOnce sync.Once
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
	// OpenOCD exits saying so, and another port is tried.
	const attempts = 3
	for i := 1; ; i++ {
		port, err := freePort()
		if err != nil {
			return nil, fmt.Errorf("launch openocd: find a free port: %w", err)
		}
		p, err := start(cfg, port)
		if err != nil {
			return nil, err
		}
		err = p.waitReady(ctx)
		if err == nil {
			return p, nil
		}
		p.Stop()
		if i < attempts && p.out.contains("couldn't bind telnet") {
			continue
		}
		return nil, err
	}
}

// argv returns OpenOCD's arguments for a telnet server on port.
func (cfg *LaunchConfig) argv(port int) []string {
	// hilrun's settings come first, so that they hold even for a
	// configuration file that runs init.
	a := []string{
		"-c", "bindto 127.0.0.1",
		"-c", "telnet_port " + strconv.Itoa(port),
		"-c", "gdb_port disabled",
		"-c", "tcl_port disabled",
	}
	if cfg.AdapterSerial != "" {
		a = append(a, "-c", "adapter serial "+tclWord(cfg.AdapterSerial))
	}
	for _, f := range cfg.Configs {
		a = append(a, "-f", f)
	}
	for _, c := range cfg.Commands {
		a = append(a, "-c", c)
	}
	return append(a, cfg.Args...)
}

func start(cfg LaunchConfig, port int) (*Process, error) {
	p := &Process{
		addr:  net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		grace: cfg.StopGrace,
		done:  make(chan struct{}),
	}
	p.out = &outputRing{max: outputLines, onLine: p.sawLine}
	var w io.Writer = p.out
	if cfg.LogFile != "" {
		// A write that fails does not fail the copy of OpenOCD's output
		// (which would leave OpenOCD to die of SIGPIPE on its next
		// message): it is counted, for LogErr.
		f, err := logfile.Append("openocd log", cfg.LogFile)
		if err != nil {
			return nil, fmt.Errorf("launch openocd: open log file: %w", err)
		}
		p.log = f
		w = io.MultiWriter(p.out, p.log)
	}
	cmd := exec.Command(cfg.Binary, cfg.argv(port)...)
	cmd.Dir = cfg.Dir
	if cfg.Environ != nil || len(cfg.Env) > 0 {
		base := cfg.Environ
		if base == nil {
			base = os.Environ()
		}
		// Never nil here: a nil Env would give OpenOCD hilrun's environment.
		cmd.Env = append(append(make([]string, 0, len(base)+len(cfg.Env)), base...), cfg.Env...)
	}
	cmd.Stdin = nil
	cmd.Stdout = w
	cmd.Stderr = w
	cmd.SysProcAttr = procgroup.SysProcAttr()
	// OpenOCD starts no children, but should one keep the output pipe
	// open, Wait must still return.
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		if p.log != nil {
			p.log.Close()
		}
		return nil, fmt.Errorf("launch openocd: %w", err)
	}
	p.cmd = cmd
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// listening matches the line OpenOCD prints when its telnet server
// listens.
var listening = regexp.MustCompile(`Listening on port ([0-9]+) for telnet connections`)

// sawLine follows OpenOCD's output: should a configuration file have
// moved the telnet port, the port it announces is the one to use.
func (p *Process) sawLine(line string) {
	if m := listening.FindStringSubmatch(line); m != nil {
		p.out.mu.Lock()
		p.out.port = m[1]
		p.out.mu.Unlock()
	}
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
		case <-p.done:
			return p.exitedError("before its telnet server was ready")
		case <-ctx.Done():
			msg := fmt.Sprintf("launch openocd: its telnet server at %s was not ready after %v", p.TelnetAddr(), time.Since(start).Round(time.Millisecond))
			if last != nil {
				msg += " (" + last.Error() + ")"
			}
			return fmt.Errorf("%s: %w%s", msg, ctx.Err(), p.lastWords())
		default:
		}
		err := p.greeted(ctx)
		if err == nil {
			return nil
		}
		last = err
		select {
		case <-time.After(backoff):
		case <-p.done:
		case <-ctx.Done():
		}
		backoff = min(2*backoff, 200*time.Millisecond)
	}
}

// greeted connects to the telnet server and reads until its prompt.
func (p *Process) greeted(ctx context.Context) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", p.TelnetAddr())
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
		case <-p.done:
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

// TelnetAddr returns the address of OpenOCD's telnet server, for Dial.
func (p *Process) TelnetAddr() string {
	p.out.mu.Lock()
	defer p.out.mu.Unlock()
	if p.out.port != "" {
		return net.JoinHostPort("127.0.0.1", p.out.port)
	}
	return p.addr
}

// Dial opens a Session with the process's telnet server.
func (p *Process) Dial(ctx context.Context, opts ...Option) (*Session, error) {
	return Dial(ctx, p.TelnetAddr(), opts...)
}

// Pid returns the process ID.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Err returns how the process exited, once Done is closed; nil before.
func (p *Process) Err() error {
	select {
	case <-p.done:
		return p.waitErr
	default:
		return nil
	}
}

// Output returns the last lines OpenOCD printed.
func (p *Process) Output() string {
	return strings.Join(p.out.lines(), "\n")
}

// Stop ends OpenOCD and everything in its process group: SIGTERM, then
// SIGKILL if it has not exited after LaunchConfig.StopGrace. It returns
// once the process has exited. Stop is idempotent and returns nil: an exit
// forced by Stop is not an error.
func (p *Process) Stop() error {
	p.stopOnce.Do(func() {
		select {
		case <-p.done:
		default:
			procgroup.Terminate(p.cmd.Process)
			select {
			case <-p.done:
			case <-time.After(p.grace):
				procgroup.Kill(p.cmd.Process)
				<-p.done
			}
		}
		// Whatever OpenOCD left in its group goes with it.
		procgroup.Kill(p.cmd.Process)
		if p.log != nil {
			p.log.Close()
		}
	})
	return nil
}

// LogErr returns nil when LaunchConfig.LogFile holds all OpenOCD printed
// (or there is none), else an error saying how many bytes it lost, as on a
// full disk. Call it after Stop for the final word.
func (p *Process) LogErr() error {
	if p.log == nil {
		return nil
	}
	if e := p.log.Loss(); e != nil {
		return e
	}
	return nil
}

// exitedError describes an unexpected exit, with OpenOCD's last words.
func (p *Process) exitedError(when string) error {
	status := "exited"
	if p.waitErr != nil {
		var ee *exec.ExitError
		if errors.As(p.waitErr, &ee) {
			status = "exited with " + ee.ProcessState.String()
		} else {
			status = "failed: " + p.waitErr.Error()
		}
	}
	return fmt.Errorf("launch openocd: %s %s%s", status, when, p.lastWords())
}

// lastWords returns OpenOCD's last output lines for an error message,
// errors first, or "" when it printed nothing.
func (p *Process) lastWords() string {
	lines := p.out.lines()
	if len(lines) == 0 {
		return ""
	}
	const show = 10
	var errs []string
	for _, l := range lines {
		if strings.HasPrefix(l, "Error") {
			errs = append(errs, l)
		}
	}
	if len(errs) == 0 {
		errs = lines
	}
	if len(errs) > show {
		errs = errs[len(errs)-show:]
	}
	return "; openocd said:\n\t" + strings.Join(errs, "\n\t")
}

// freePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// outputRing keeps the last lines written to it.
type outputRing struct {
	max    int
	onLine func(string)

	mu      sync.Mutex
	partial []byte
	ring    []string
	port    string // the telnet port OpenOCD announced
}

func (r *outputRing) Write(b []byte) (int, error) {
	r.mu.Lock()
	var done []string
	for _, c := range b {
		if c == '\n' {
			l := strings.TrimRight(string(r.partial), "\r")
			r.partial = r.partial[:0]
			r.ring = append(r.ring, l)
			if len(r.ring) > r.max {
				r.ring = r.ring[len(r.ring)-r.max:]
			}
			done = append(done, l)
			continue
		}
		if len(r.partial) < 4096 {
			r.partial = append(r.partial, c)
		}
	}
	r.mu.Unlock()
	if r.onLine != nil {
		for _, l := range done {
			r.onLine(l)
		}
	}
	return len(b), nil
}

func (r *outputRing) lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := append([]string(nil), r.ring...)
	if len(r.partial) > 0 {
		l = append(l, string(r.partial))
	}
	return l
}

func (r *outputRing) contains(s string) bool {
	for _, l := range r.lines() {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}
