// Package ser2net runs Debian's ser2net (4.x) in front of a local serial
// device for hilrun's tests and benchmarks, so that network consoles are
// checked against the server labs really use.
package ser2net

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Path returns the ser2net program: ser2net on PATH, else /usr/sbin/ser2net
// (Debian installs it there, which is not on every user's PATH).
func Path() (string, error) {
	if p, err := exec.LookPath("ser2net"); err == nil {
		return p, nil
	}
	const sbin = "/usr/sbin/ser2net"
	if _, err := os.Stat(sbin); err != nil {
		return "", fmt.Errorf("ser2net is not installed (apt-get install ser2net): %w", err)
	}
	return sbin, nil
}

// Mode is how ser2net offers the device.
type Mode string

// Modes: a raw TCP socket, or telnet with RFC 2217 serial port control.
const (
	Raw     Mode = "tcp"
	RFC2217 Mode = "rfc2217"
)

// Server is a running ser2net.
type Server struct {
	prog, config string
	port         int
	mode         Mode

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	output strings.Builder
}

// Start starts ser2net offering device on a free TCP port of 127.0.0.1 in
// mode, and returns once it listens. dir receives its configuration.
// options are more lines of the connection's options (see man
// ser2net.yaml), such as "chardelay: false".
func Start(ctx context.Context, dir, device string, mode Mode, options ...string) (*Server, error) {
	prog, err := Path()
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	accepter := fmt.Sprintf("tcp,127.0.0.1,%d", port)
	if mode == RFC2217 {
		accepter = "telnet(rfc2217)," + accepter
	}
	config := filepath.Join(dir, fmt.Sprintf("ser2net-%d.yaml", port))
	yaml := fmt.Sprintf("connection: &dut\n  accepter: %s\n  connector: serialdev,%s,115200n81,local\n", accepter, device)
	if len(options) > 0 {
		yaml += "  options:\n"
	}
	for _, o := range options {
		yaml += "    " + o + "\n"
	}
	if err := os.WriteFile(config, []byte(yaml), 0o644); err != nil {
		return nil, fmt.Errorf("write ser2net configuration: %w", err)
	}
	s := &Server{prog: prog, config: config, port: port, mode: mode}
	if err := s.start(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// URL returns the console port URL: tcp://127.0.0.1:PORT or
// rfc2217://127.0.0.1:PORT.
func (s *Server) URL() string { return fmt.Sprintf("%s://127.0.0.1:%d", s.mode, s.port) }

// Output returns what ser2net printed.
func (s *Server) Output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.output.String()
}

func (s *Server) start(ctx context.Context) error {
	cmd := exec.Command(s.prog, "-n", "-d", "-c", s.config)
	out, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	cmd.Stdout = cmd.Stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start ser2net: %w", err)
	}
	exited := make(chan struct{})
	s.mu.Lock()
	s.cmd, s.exited = cmd, exited
	s.mu.Unlock()
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			s.mu.Lock()
			s.output.WriteString(sc.Text() + "\n")
			s.mu.Unlock()
		}
		cmd.Wait()
		close(exited)
	}()
	// Wait until it listens: the socket shows in /proc/net/tcp. Connecting
	// to find out would open the device.
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !listening(s.port) {
		select {
		case <-ctx.Done():
			s.Stop()
			return fmt.Errorf("wait for ser2net to listen on port %d: %w", s.port, ctx.Err())
		case <-exited:
			return fmt.Errorf("ser2net exited before listening on port %d: %s", s.port, s.Output())
		case <-tick.C:
		}
	}
	return nil
}

// Restart stops ser2net and starts it again on the same port, dropping
// every connection, as a lab server restarting does.
func (s *Server) Restart(ctx context.Context) error {
	s.Stop()
	return s.start(ctx)
}

// Stop ends ser2net (SIGTERM, then SIGKILL after 10 s) and waits for it to
// exit. It is idempotent.
func (s *Server) Stop() {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Signal(os.Interrupt)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-exited
	}
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free TCP port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// listening reports whether a socket listens on TCP port on this host,
// from /proc/net/tcp and tcp6.
func listening(port int) bool {
	hex := fmt.Sprintf(":%04X", port)
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fields := strings.Fields(line)
			// local_address is field 1, st field 3; 0A is LISTEN.
			if len(fields) > 3 && strings.HasSuffix(fields[1], hex) && fields[3] == "0A" {
				return true
			}
		}
	}
	return false
}
