package openocd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/gate/dial"
)

// The test binary doubles as a fake openocd: with HILRUN_FAKE_OPENOCD set
// it runs fakeMain instead of the tests. Launch's tests point
// LaunchConfig.Binary at it.
func TestMain(m *testing.M) {
	if mode := os.Getenv("HILRUN_FAKE_OPENOCD"); mode != "" {
		os.Exit(fakeMain(mode, os.Args[1:]))
	}
	os.Exit(m.Run())
}

// fakeMain is the fake openocd. Modes:
//
//	fail     print errors as OpenOCD does without a probe and exit 1
//	silent   never listen
//	serve    listen on the telnet port and greet connections
//	busy     fail to bind the port the first time (a counter file in
//	         HILRUN_FAKE_STATE), serve the next
//	child    (internal) sleep, as a process OpenOCD started would
//	launch   (internal) Launch a fake in serve mode, print its pid, wait
//
// HILRUN_FAKE_IGNORE_TERM=1 makes it ignore SIGTERM; HILRUN_FAKE_CHILD=1
// makes it start a child in its process group and write the child's pid
// to HILRUN_FAKE_STATE.
func fakeMain(mode string, args []string) int {
	port := ""
	for i, a := range args {
		if a == "-c" && i+1 < len(args) && strings.HasPrefix(args[i+1], "telnet_port ") {
			port = strings.TrimPrefix(args[i+1], "telnet_port ")
		}
	}
	fmt.Fprintln(os.Stderr, "Open On-Chip Debugger 0.12.0 (fake)")
	if h := os.Getenv("HILRUN_FAKE_HELLO"); h != "" {
		fmt.Fprintln(os.Stderr, h)
	}
	if os.Getenv("HILRUN_FAKE_IGNORE_TERM") == "1" {
		signal.Ignore(syscall.SIGTERM)
	}
	if os.Getenv("HILRUN_FAKE_CHILD") == "1" && mode != "child" {
		child := exec.Command(os.Args[0])
		child.Env = append(os.Environ(), "HILRUN_FAKE_OPENOCD=child", "HILRUN_FAKE_CHILD=0")
		if err := child.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		os.WriteFile(os.Getenv("HILRUN_FAKE_STATE"), []byte(strconv.Itoa(child.Process.Pid)), 0o644)
	}
	switch mode {
	case "fail":
		fmt.Fprintln(os.Stderr, "Info : Listening on port "+port+" for telnet connections")
		fmt.Fprintln(os.Stderr, "Error: unable to find a matching CMSIS-DAP device")
		fmt.Fprintln(os.Stderr, "Error: open failed")
		return 1
	case "silent", "child":
		for {
			time.Sleep(time.Hour) // not select{}: the runtime would call that a deadlock
		}
	case "busy":
		state := os.Getenv("HILRUN_FAKE_STATE")
		if _, err := os.Stat(state); err != nil {
			os.WriteFile(state, []byte("1"), 0o644)
			fmt.Fprintf(os.Stderr, "Error: couldn't bind telnet to socket on port %s: Address already in use\n", port)
			return 1
		}
		fallthrough
	case "serve":
		ln, err := net.Listen("tcp", "127.0.0.1:"+port)
		if err != nil {
			fmt.Fprintln(os.Stderr, "Error:", err)
			return 1
		}
		fmt.Fprintln(os.Stderr, "Info : Listening on port "+port+" for telnet connections")
		for {
			c, err := ln.Accept()
			if err != nil {
				return 1
			}
			go func() {
				c.Write([]byte("\xff\xfb\x03\xff\xfb\x01\xff\xfd\x03\xff\xfe\x01Open On-Chip Debugger\r\n\r> "))
				bufio.NewReader(c).ReadString(0)
				c.Close()
			}()
		}
	case "launch":
		os.Setenv("HILRUN_FAKE_OPENOCD", "serve")
		p, err := Launch(context.Background(), LaunchConfig{Procs: hostProcs, Dial: dial.Anywhere(), Binary: os.Args[0]})
		if err != nil {
			fmt.Println("error:", err)
			return 1
		}
		fmt.Println(p.Pid())
		for {
			time.Sleep(time.Hour)
		}
	}
	fmt.Fprintln(os.Stderr, "unknown mode", mode)
	return 2
}

// fakeConfig returns a LaunchConfig that starts the fake openocd in mode.
func fakeConfig(t *testing.T, mode string, env ...string) LaunchConfig {
	t.Helper()
	t.Setenv("HILRUN_FAKE_OPENOCD", mode)
	for _, e := range env {
		k, v, _ := strings.Cut(e, "=")
		t.Setenv(k, v)
	}
	return LaunchConfig{Procs: hostProcs, Dial: dial.Anywhere(), Binary: os.Args[0], StopGrace: 200 * time.Millisecond}
}

func TestLaunchArgs(t *testing.T) {
	cfg := LaunchConfig{Procs: hostProcs, Dial: dial.Anywhere(),
		Configs:       []string{"interface/stlink.cfg", "target/stm32f4x.cfg"},
		Commands:      []string{"init", "reset halt"},
		AdapterSerial: "066DFF 49",
		Args:          []string{"-d2"},
	}
	tests := []struct {
		name    string
		tclPort int
		want    []string
	}{
		{
			name:    "tcl",
			tclPort: 6666,
			want: []string{
				"-c", "bindto 127.0.0.1", "-c", "telnet_port 4444", "-c", "gdb_port disabled", "-c", "tcl_port 6666",
				"-c", `adapter serial "066DFF 49"`,
				"-f", "interface/stlink.cfg", "-f", "target/stm32f4x.cfg",
				"-c", "if {[catch {command mode} _m] || $_m eq {config}} {catch {tcl_port 6666}}; set ::_hilrun_launch N; list",
				"-c", "init", "-c", "reset halt",
				"-d2",
			},
		},
		{
			name: "telnet only",
			want: []string{
				"-c", "bindto 127.0.0.1", "-c", "telnet_port 4444", "-c", "gdb_port disabled", "-c", "tcl_port disabled",
				"-c", `adapter serial "066DFF 49"`,
				"-f", "interface/stlink.cfg", "-f", "target/stm32f4x.cfg",
				"-c", "init", "-c", "reset halt",
				"-d2",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := cfg.argv(4444, tt.tclPort, "N"); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("argv:\ngot  %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestLaunchFallsBackToTelnet launches a fake OpenOCD that serves only
// telnet: sessions use it, and RPCErr says why; unless the Tcl RPC server
// is required, when the launch fails.
func TestLaunchFallsBackToTelnet(t *testing.T) {
	cfg := fakeConfig(t, "serve")
	p, err := Launch(testCtx(t), cfg)
	must(t, err)
	defer p.Stop()
	if p.Transport() != Telnet || p.Addr() != p.TelnetAddr() || p.TclAddr() != "" {
		t.Errorf("Transport() = %v, Addr() = %q, TclAddr() = %q, want telnet at %s", p.Transport(), p.Addr(), p.TclAddr(), p.TelnetAddr())
	}
	if err := p.RPCErr(); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("RPCErr() = %v, want connection refused", err)
	}

	cfg.Transport = TclRPC
	p2, err := Launch(testCtx(t), cfg)
	if p2 != nil || err == nil || !strings.HasPrefix(err.Error(), "launch openocd: its Tcl RPC server: connect to openocd at tcl://127.0.0.1:") {
		t.Errorf("required: got %v, %v, want an error about the Tcl RPC server", p2, err)
	}

	cfg.Transport = Telnet
	p3, err := Launch(testCtx(t), cfg)
	must(t, err)
	defer p3.Stop()
	if p3.Transport() != Telnet || p3.RPCErr() != nil {
		t.Errorf("telnet asked for: Transport() = %v, RPCErr() = %v", p3.Transport(), p3.RPCErr())
	}
}

func TestLaunchFails(t *testing.T) {
	cfg := fakeConfig(t, "fail")
	p, err := Launch(testCtx(t), cfg)
	if p != nil || err == nil {
		t.Fatalf("got %v, %v, want an error", p, err)
	}
	want := "launch openocd: exited with exit status 1 before its telnet server was ready; openocd said:\n" +
		"\tError: unable to find a matching CMSIS-DAP device\n\tError: open failed"
	if err.Error() != want {
		t.Errorf("got  %q\nwant %q", err, want)
	}
}

func TestLaunchMissingBinary(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "openocd")
	_, err := Launch(testCtx(t), LaunchConfig{Procs: hostProcs, Dial: dial.Anywhere(), Binary: bin})
	if err == nil || !strings.HasPrefix(err.Error(), "launch openocd: ") || !strings.Contains(err.Error(), bin) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("got %v, want an error naming %s and wrapping ErrNotExist", err, bin)
	}
}

func TestLaunchNotReady(t *testing.T) {
	state := filepath.Join(t.TempDir(), "child.pid")
	cfg := fakeConfig(t, "silent", "HILRUN_FAKE_CHILD=1", "HILRUN_FAKE_STATE="+state)
	// Launch gives up when its context ends: here once the fake has
	// printed its banner and started its child (it writes the child's pid
	// after both), however long a loaded machine takes to get there.
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	go func() {
		defer cancel()
		for ctx.Err() == nil {
			if b, err := os.ReadFile(state); err == nil && len(b) > 0 {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	var err error
	within(t, 20*time.Second, "Launch", func() { _, err = Launch(ctx, cfg) })
	if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "launch openocd: its telnet server at 127.0.0.1:") {
		t.Fatalf("got %v, want Launch to give up waiting for the telnet server", err)
	}
	if !strings.Contains(err.Error(), "openocd said:\n\tOpen On-Chip Debugger 0.12.0 (fake)") {
		t.Errorf("the error lacks OpenOCD's output: %v", err)
	}
	b, rerr := os.ReadFile(state)
	must(t, rerr)
	child, _ := strconv.Atoi(string(b))
	waitGone(t, child, "the child of an OpenOCD that never got ready")
}

func TestLaunchRetriesATakenPort(t *testing.T) {
	cfg := fakeConfig(t, "busy", "HILRUN_FAKE_STATE="+filepath.Join(t.TempDir(), "tried"))
	p, err := Launch(testCtx(t), cfg)
	must(t, err)
	defer p.Stop()
	c, err := net.Dial("tcp", p.TelnetAddr())
	must(t, err)
	c.Close()
}

func TestLaunchFollowsTheAnnouncedPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	cfg := fakeConfig(t, "serve")
	cfg.Args = []string{"-c", "telnet_port " + port} // as a configuration file might
	p, err := Launch(testCtx(t), cfg)
	must(t, err)
	defer p.Stop()
	if want := "127.0.0.1:" + port; p.TelnetAddr() != want {
		t.Errorf("TelnetAddr() = %s, want %s", p.TelnetAddr(), want)
	}
}

func TestStop(t *testing.T) {
	tests := []struct {
		name       string
		ignoreTerm bool
		minTime    time.Duration
	}{
		{name: "exits on SIGTERM"},
		{name: "killed after the grace period", ignoreTerm: true, minTime: 200 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state := filepath.Join(t.TempDir(), "child.pid")
			env := []string{"HILRUN_FAKE_CHILD=1", "HILRUN_FAKE_STATE=" + state, "HILRUN_FAKE_IGNORE_TERM=0"}
			if tt.ignoreTerm {
				env[2] = "HILRUN_FAKE_IGNORE_TERM=1"
			}
			cfg := fakeConfig(t, "serve", env...)
			p, err := Launch(testCtx(t), cfg)
			must(t, err)
			b, err := os.ReadFile(state)
			must(t, err)
			child, _ := strconv.Atoi(string(b))
			if gone(child) {
				t.Fatal("the fake's child is not running")
			}
			took := within(t, 10*time.Second, "Stop", func() { must(t, p.Stop()) })
			if took < tt.minTime {
				t.Errorf("Stop took %v, want at least %v", took, tt.minTime)
			}
			waitGone(t, p.Pid(), "openocd")
			waitGone(t, child, "openocd's child")
			select {
			case <-p.Done():
			default:
				t.Error("Done is not closed after Stop")
			}
			if err := p.Stop(); err != nil {
				t.Errorf("second Stop: %v", err)
			}
		})
	}
}

func TestLaunchLogFile(t *testing.T) {
	log := filepath.Join(t.TempDir(), "openocd.log")
	cfg := fakeConfig(t, "serve")
	cfg.LogFile = log
	cfg.Env = []string{"HILRUN_FAKE_HELLO=hello from Env"}
	p, err := Launch(testCtx(t), cfg)
	must(t, err)
	p.Stop()
	b, err := os.ReadFile(log)
	must(t, err)
	if !strings.Contains(string(b), "Open On-Chip Debugger 0.12.0 (fake)\nhello from Env\nInfo : Listening on port ") {
		t.Errorf("the log file holds %q", b)
	}
	if !strings.Contains(p.Output(), "Listening on port") {
		t.Errorf("Output() = %q", p.Output())
	}
}

// TestLaunchLogFileFull gives OpenOCD a log file on a full disk
// (/dev/full): it still starts, and LogErr says what the log lost. (The
// end-to-end TestE2ELogFileFull reads memory through it.)
func TestLaunchLogFileFull(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full on this system")
	}
	log := filepath.Join(t.TempDir(), "openocd.log")
	if err := os.Symlink("/dev/full", log); err != nil {
		t.Fatal(err)
	}
	cfg := fakeConfig(t, "serve")
	cfg.LogFile = log
	p, err := Launch(testCtx(t), cfg)
	must(t, err)
	p.Stop()
	if err := p.LogErr(); err == nil || !strings.Contains(err.Error(), "openocd log "+log+": ") || !strings.Contains(err.Error(), "bytes lost: no space left on device") {
		t.Errorf("LogErr = %v", err)
	}
	if !strings.Contains(p.Output(), "Listening on port") {
		t.Errorf("Output() = %q", p.Output())
	}
}
