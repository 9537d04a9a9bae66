package openocd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// transports are the transports a Session speaks, for tests that run
// against each.
var transports = []Transport{Telnet, TclRPC}

// eachTransport runs fn as a parallel subtest per transport.
func eachTransport(t *testing.T, fn func(t *testing.T, tr Transport)) {
	t.Helper()
	for _, tr := range transports {
		t.Run(tr.String(), func(t *testing.T) {
			t.Parallel()
			fn(t, tr)
		})
	}
}

// echoHandler answers every command with its own text.
func echoHandler(cmd string) fakeAnswer { return fakeAnswer{out: cmd} }

func dialFake(t testing.TB, f *fakeOpenOCD, opts ...Option) *Session {
	t.Helper()
	s, err := Dial(testCtx(t), f.addr(), append([]Option{anyAddr}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// within fails the test if fn takes longer than d: nothing may hang.
func within(t testing.TB, d time.Duration, what string, fn func()) time.Duration {
	t.Helper()
	start := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s: still running after %v", what, d)
	}
	return time.Since(start)
}

func TestCommandResults(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, tr Transport) {
		f := newFake(t, tr, func(cmd string) fakeAnswer {
			switch cmd {
			case "fail":
				return fakeAnswer{code: 1, out: "it failed", logs: []string{"Error one", "Error two"}}
			case "fail quietly":
				return fakeAnswer{code: -306}
			case "return":
				return fakeAnswer{code: 2, out: "returned"}
			case "multi":
				return fakeAnswer{out: "line 1\nline 2\r\n\x02\x04 odd bytes\n", logs: []string{"> a log line"}}
			case "sub":
				return fakeAnswer{out: "a\x1a\x1ab\x1a", logs: []string{"log\x1a"}}
			}
			return echoHandler(cmd)
		})
		s := dialFake(t, f)
		if v := s.Version(); v != "Open On-Chip Debugger 0.12.0 (fake)" {
			t.Errorf("Version() = %q", v)
		}
		tests := []struct {
			name    string
			cmd     string
			want    Reply
			wantTCL *Reply // when it differs over Tcl RPC
			wantErr string
		}{
			{name: "plain", cmd: "mdw 0x0", want: Reply{Result: "mdw 0x0"}},
			{name: "quoting", cmd: "return \"$x [y] \\z\"\n\tnext é", want: Reply{Result: "return \"$x [y] \\z\"\n\tnext é"}},
			{name: "tcl return", cmd: "return", want: Reply{Result: "returned"}},
			{
				name: "output with any bytes", cmd: "multi", want: Reply{Result: "line 1\nline 2\r\n\x02\x04 odd bytes\n", Log: []string{"a log line"}},
				// "> " is the telnet prompt a log line redraws.
				wantTCL: &Reply{Result: "line 1\nline 2\r\n\x02\x04 odd bytes\n", Log: []string{"> a log line"}},
			},
			{name: "the Tcl RPC terminator in output and log", cmd: "sub", want: Reply{Result: "a\x1a\x1ab\x1a", Log: []string{"log\x1a"}}},
			{name: "error", cmd: "fail", wantErr: "openocd: fail: Error one; Error two; it failed"},
			{name: "error without words", cmd: "fail quietly", wantErr: "openocd: fail quietly: failed without a message (openocd error -306: unaligned access)"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r, err := s.Run(testCtx(t), tt.cmd)
				if tt.wantErr != "" {
					var ce *CommandError
					if !errors.As(err, &ce) || err.Error() != tt.wantErr {
						t.Fatalf("got error %v, want *CommandError %q", err, tt.wantErr)
					}
					if !ce.TestFailure() {
						t.Error("a CommandError must be a test failure")
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				want := tt.want
				if tr == TclRPC && tt.wantTCL != nil {
					want = *tt.wantTCL
				}
				if fmt.Sprintf("%q", r) != fmt.Sprintf("%q", want) {
					t.Errorf("got %q, want %q", r, want)
				}
			})
		}
	})
}

func TestCommandRejectsWhatTelnetCannotCarry(t *testing.T) {
	t.Parallel()
	f := newFakeOpenOCD(t, echoHandler)
	s := dialFake(t, f)
	tests := []struct {
		name, cmd, wantErr string
	}{
		{"too long", "echo " + strings.Repeat("x", maxLine), "openocd: command is too long for openocd's telnet server: "},
		{"invalid utf-8", "echo \xff", "openocd: command \"echo \\xff\" is not valid UTF-8"},
		{"beyond the BMP", "echo 😀", "openocd: command \"echo 😀\" holds U+1F600, which openocd's Tcl cannot take in an escape"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Command(testCtx(t), tt.cmd)
			if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
				t.Fatalf("got %v, want an error starting %q", err, tt.wantErr)
			}
		})
	}
	if got := f.received(); len(got) != 0 {
		t.Errorf("the server received %q; nothing should have been sent", got)
	}
}

func TestCommandRejectsWhatTclRPCCannotCarry(t *testing.T) {
	t.Parallel()
	f := newFake(t, TclRPC, echoHandler)
	s := dialFake(t, f)
	tests := []struct {
		name, cmd, wantErr string
	}{
		{"too long", "echo " + strings.Repeat("x", maxRPCRequest), "openocd: command is too long for openocd's tcl server: "},
		{"invalid utf-8", "echo \xff", "openocd: command \"echo \\xff\" is not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Command(testCtx(t), tt.cmd)
			if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
				t.Fatalf("got %v, want an error starting %q", err, tt.wantErr)
			}
		})
	}
	if got := f.received(); len(got) != 0 {
		t.Errorf("the server received %q; nothing should have been sent", got)
	}
	// What telnet cannot carry, Tcl RPC can.
	for _, cmd := range []string{"echo 😀", "echo " + strings.Repeat("x", 2*maxLine), "a\x00b\x1ac\x7f"} {
		if out, err := s.Command(testCtx(t), cmd); err != nil || out != cmd {
			t.Errorf("%.40q: got %.40q, %v", cmd, out, err)
		}
	}
}

func TestTimeoutDropsTheConnection(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, tr Transport) {
		f := newFake(t, tr, func(cmd string) fakeAnswer {
			if cmd == "slow" {
				return fakeAnswer{hang: true}
			}
			return echoHandler(cmd)
		})
		s := dialFake(t, f)
		ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
		defer cancel()
		var err error
		took := within(t, 10*time.Second, "a command past its deadline", func() {
			_, err = s.Command(ctx, "slow")
		})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v, want a timeout", err)
		}
		if took < 140*time.Millisecond {
			t.Errorf("gave up after %v, before the deadline", took)
		}
		want := fmt.Sprintf("openocd at %s did not answer \"slow\" within ", f.addr())
		if !strings.HasPrefix(err.Error(), want) {
			t.Errorf("got %q, want it to start %q", err, want)
		}
		var ce *CommandError
		if errors.As(err, &ce) || errors.Is(err, ErrUnavailable) {
			t.Errorf("a timeout is neither a CommandError nor ErrUnavailable: %v", err)
		}
		out, err := s.Command(testCtx(t), "fast")
		if err != nil || out != "fast" {
			t.Fatalf("after the timeout: got %q, %v", out, err)
		}
		if n := f.dialCount(); n != 2 {
			t.Errorf("connected %d times, want 2: the timeout drops the connection", n)
		}
	})
}

func TestCancel(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, tr Transport) {
		f := newFake(t, tr, func(cmd string) fakeAnswer { return fakeAnswer{hang: true} })
		s := dialFake(t, f)
		ctx, cancel := context.WithCancel(context.Background())
		go func() { // cancel once the command is under way
			for len(f.received()) == 0 {
				time.Sleep(time.Millisecond)
			}
			cancel()
		}()
		var err error
		within(t, 10*time.Second, "a cancelled command", func() { _, err = s.Command(ctx, "slow") })
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want context.Canceled", err)
		}
		// A context done before the call sends nothing.
		_, err = s.Command(ctx, "never")
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want context.Canceled", err)
		}
		if got := f.received(); len(got) != 1 {
			t.Errorf("the server received %q, want only the first command", got)
		}
	})
}

func TestWaitingForTurnHonoursContext(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, tr Transport) {
		release := make(chan struct{})
		f := newFake(t, tr, func(cmd string) fakeAnswer {
			if cmd == "first" {
				<-release
			}
			return echoHandler(cmd)
		})
		s := dialFake(t, f)
		done := make(chan error)
		go func() {
			_, err := s.Command(testCtx(t), "first")
			done <- err
		}()
		for len(f.received()) == 0 {
			time.Sleep(time.Millisecond)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := s.Command(ctx, "second")
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "waiting for the previous command") {
			t.Errorf("got %v, want a timeout waiting for the turn", err)
		}
		close(release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

func TestConcurrentCommands(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, tr Transport) {
		f := newFake(t, tr, echoHandler)
		s := dialFake(t, f)
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 25 {
					cmd := fmt.Sprintf("return %d.%d", g, i)
					out, err := s.Command(testCtx(t), cmd)
					if err != nil || out != cmd {
						t.Errorf("%s: got %q, %v", cmd, out, err)
						return
					}
				}
			}()
		}
		wg.Wait()
	})
}

func TestReconnect(t *testing.T) {
	t.Parallel()
	type outcome struct {
		wantErr      string // "" for success
		wantSent     int    // times "cmd" reached the server
		wantDials    int
		wantNextDial bool // whether a later command connects again
	}
	// Over Tcl RPC, a request the server closed the connection on before
	// running it looks like one it ran: the effect is unknown.
	unknown := outcome{
		wantErr:  "connection lost while \"cmd\" ran (its effect is unknown): EOF",
		wantSent: 1, wantDials: 1, wantNextDial: true,
	}
	tests := []struct {
		name string
		// first is the answer to the first "cmd"; later ones echo.
		first fakeAnswer
		// dropIdle closes the connection while the session is idle.
		dropIdle bool
		// stop stops the server after the first command.
		stop bool
		// want is the outcome per transport.
		want map[Transport]outcome
	}{
		{
			name: "dropped while idle: reconnects transparently", dropIdle: true,
			want: map[Transport]outcome{
				Telnet: {wantSent: 1, wantDials: 2},
				TclRPC: {wantSent: 1, wantDials: 2},
			},
		},
		{
			name: "closed before the echo: sent again on a new connection", first: fakeAnswer{closeBeforeEcho: true},
			want: map[Transport]outcome{
				Telnet: {wantSent: 2, wantDials: 2},
				TclRPC: unknown,
			},
		},
		{
			name: "closed after the echo: not repeated", first: fakeAnswer{closeAfterEcho: true},
			want: map[Transport]outcome{Telnet: unknown, TclRPC: unknown},
		},
		{
			// Sent on the dead connection, so not retried: a raw
			// command may have effects.
			name: "server gone: one reconnect, then unavailable", dropIdle: true, stop: true,
			want: map[Transport]outcome{
				Telnet: {wantErr: "reconnect to openocd at ADDR: dial tcp HOSTPORT: connect: connection refused", wantSent: 0, wantDials: 1},
				TclRPC: {wantErr: "reconnect to openocd at ADDR: dial tcp HOSTPORT: connect: connection refused", wantSent: 0, wantDials: 1},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			eachTransport(t, func(t *testing.T, tr Transport) {
				want := tt.want[tr]
				var mu sync.Mutex
				n := 0
				f := newFake(t, tr, func(cmd string) fakeAnswer {
					mu.Lock()
					defer mu.Unlock()
					n++
					if n == 1 && cmd == "cmd" && (tt.first.closeBeforeEcho || tt.first.closeAfterEcho) {
						return tt.first
					}
					return echoHandler(cmd)
				})
				s := dialFake(t, f)
				if tt.dropIdle {
					if tt.stop {
						f.stop()
					} else {
						f.dropAll()
					}
					time.Sleep(20 * time.Millisecond)
				}
				var out string
				var err error
				ctx := testCtx(t)
				if tt.stop {
					// Bounds the retries; the outcome is the same however
					// many fit in.
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, 300*time.Millisecond)
					defer cancel()
				}
				within(t, 10*time.Second, "the command", func() { out, err = s.Command(ctx, "cmd") })
				if want.wantErr == "" {
					if err != nil || out != "cmd" {
						t.Fatalf("got %q, %v, want the answer", out, err)
					}
				} else {
					w := strings.NewReplacer("ADDR", f.addr(), "HOSTPORT", f.hostport()).Replace(want.wantErr)
					if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), w) {
						t.Fatalf("got %v, want ErrUnavailable saying %q", err, w)
					}
				}
				if got := len(f.received()); got != want.wantSent {
					t.Errorf("the server received cmd %d times, want %d", got, want.wantSent)
				}
				if got := f.dialCount(); got != want.wantDials {
					t.Errorf("connected %d times, want %d", got, want.wantDials)
				}
				if want.wantNextDial {
					if out, err := s.Command(testCtx(t), "again"); err != nil || out != "again" {
						t.Fatalf("the next command: got %q, %v", out, err)
					}
					if got := f.dialCount(); got != want.wantDials+1 {
						t.Errorf("connected %d times after the next command, want %d", got, want.wantDials+1)
					}
				}
			})
		})
	}
}

func TestUnavailableEveryTime(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, tr Transport) {
		f := newFake(t, tr, echoHandler)
		s := dialFake(t, f)
		f.stop()
		// Each read retries until its deadline, and fails; so does a raw
		// command once the connection is gone, as none of it is sent.
		for i := range 4 {
			ctx, cancel := context.WithTimeout(testCtx(t), 200*time.Millisecond)
			var err error
			within(t, 10*time.Second, "a command without a server", func() {
				if i%2 == 0 {
					_, err = s.ReadMemory(ctx, 0x20000000, 32, 1)
				} else {
					_, err = s.Command(ctx, "version")
				}
			})
			cancel()
			if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "(tried ") {
				t.Fatalf("command %d: got %v, want ErrUnavailable after retries", i+1, err)
			}
		}
	})
}

func TestDialErrors(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	silent := ln.Addr().String() // accepts (the kernel does) and never greets
	t.Cleanup(func() { ln.Close() })
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	refused := closed.Addr().String()
	closed.Close()

	eachTransport(t, func(t *testing.T, tr Transport) {
		t.Run("refused", func(t *testing.T) {
			s, err := Dial(testCtx(t), JoinAddr(refused, tr), anyAddr)
			if s != nil || !errors.Is(err, ErrUnavailable) {
				t.Fatalf("got %v, %v, want nil and ErrUnavailable", s, err)
			}
			want := "connect to openocd at " + JoinAddr(refused, tr) + ": dial tcp " + refused + ": connect: connection refused"
			if err.Error() != want {
				t.Errorf("got %q, want %q", err, want)
			}
		})
		t.Run("no answer", func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			var s *Session
			var err error
			within(t, 10*time.Second, "dial", func() { s, err = Dial(ctx, JoinAddr(silent, tr), anyAddr) })
			if s != nil || !errors.Is(err, ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("got %v, %v, want nil and ErrUnavailable wrapping the deadline", s, err)
			}
			if !strings.HasPrefix(err.Error(), "connect to openocd at "+JoinAddr(silent, tr)+": no answer within ") {
				t.Errorf("got %q", err)
			}
		})
	})
}

func TestDialAddresses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr    string
		opts    []Option
		want    Transport
		wantErr string
	}{
		{addr: "127.0.0.1:4444", want: Telnet},
		{addr: "127.0.0.1:6666", opts: []Option{WithTransport(TclRPC)}, want: TclRPC},
		{addr: "tcl://127.0.0.1:6666", want: TclRPC},
		{addr: "TCL://127.0.0.1:6666", opts: []Option{WithTransport(Telnet)}, want: TclRPC},
		{addr: "telnet://127.0.0.1:4444", opts: []Option{WithTransport(TclRPC)}, want: Telnet},
		{addr: "gdb://127.0.0.1:1234", wantErr: `openocd address "gdb://127.0.0.1:1234": unknown scheme "gdb": want HOST:PORT, tcl://HOST:PORT or telnet://HOST:PORT`},
		{addr: "tcl://127.0.0.1", wantErr: `openocd address "127.0.0.1": want HOST:PORT, tcl://HOST:PORT or telnet://HOST:PORT: address 127.0.0.1: missing port in address`},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			var dialled string
			opts := append(tt.opts, WithDialer(func(ctx context.Context, network, addr string) (net.Conn, error) {
				dialled = addr
				return nil, errors.New("no network in this test")
			}))
			_, err := Dial(testCtx(t), tt.addr, append([]Option{anyAddr}, opts...)...)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("got %v, want %q", err, tt.wantErr)
				}
				return
			}
			hp, tr, _ := SplitAddr(tt.addr, 0)
			want := "connect to openocd at " + JoinAddr(hp, tt.want) + ": no network in this test"
			if err == nil || err.Error() != want || dialled != hp {
				t.Errorf("got %v dialling %q, want %q dialling %q", err, dialled, want, hp)
			}
			_ = tr
		})
	}
}

// TestWrongServer points each transport at the other's server and at a
// GDB stub: the dial fails at once, saying what answered and which
// address to use, and detaches from the stub so that its target runs on.
func TestWrongServer(t *testing.T) {
	t.Parallel()
	telnet := newFake(t, Telnet, echoHandler)
	rpc := newFake(t, TclRPC, echoHandler)
	gdb := newFakeGDB(t)
	tests := []struct {
		name string
		addr string
		want string
	}{
		{"telnet at the tcl server", rpc.hostport(), "openocd at ADDR: ADDR is OpenOCD's Tcl RPC server, not its telnet server: use openocd: tcl://ADDR"},
		{"tcl at the telnet server", "tcl://" + telnet.hostport(), "openocd at tcl://ADDR: ADDR is OpenOCD's telnet server, not its Tcl RPC server: use openocd: ADDR"},
		{"telnet at a gdb stub", gdb.addr(), "openocd at ADDR: ADDR speaks the GDB remote protocol, not OpenOCD's: use gdb: ADDR"},
		{"tcl at a gdb stub", "tcl://" + gdb.addr(), "openocd at tcl://ADDR: ADDR speaks the GDB remote protocol, not OpenOCD's: use gdb: ADDR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s *Session
			var err error
			// The context has no deadline: the dial must end by itself.
			within(t, 10*time.Second, "dial", func() { s, err = Dial(context.Background(), tt.addr, anyAddr) })
			hp, _, _ := SplitAddr(tt.addr, 0)
			want := strings.ReplaceAll(tt.want, "ADDR", hp)
			if s != nil || !errors.Is(err, ErrWrongServer) || err.Error() != want {
				t.Fatalf("got %v, %v, want nil and ErrWrongServer saying\n%q", s, err, want)
			}
			if errors.Is(err, ErrUnavailable) {
				t.Error("a wrong server is not ErrUnavailable, which is retried")
			}
			var bf interface{ BenchFault() bool }
			if !errors.As(err, &bf) || !bf.BenchFault() {
				t.Error("a wrong server is a bench fault")
			}
		})
	}
	if got := gdb.detaches(); got != 2 {
		t.Errorf("the gdb stub was detached from %d times, want 2", got)
	}
	if got := telnet.received(); len(got) != 0 {
		t.Errorf("the telnet server ran %q", got)
	}
	if got := rpc.received(); len(got) != 0 {
		t.Errorf("the tcl server ran %q", got)
	}
}

func TestClose(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, tr Transport) {
		f := newFake(t, tr, func(cmd string) fakeAnswer { return fakeAnswer{hang: true} })
		s := dialFake(t, f)
		time.AfterFunc(50*time.Millisecond, func() { s.Close() })
		var err error
		within(t, 10*time.Second, "a command interrupted by Close", func() { _, err = s.Command(context.Background(), "slow") })
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("got %v, want ErrClosed", err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		if _, err := s.Command(testCtx(t), "after"); !errors.Is(err, ErrClosed) {
			t.Errorf("after Close: got %v, want ErrClosed", err)
		}
		if n := f.dialCount(); n != 1 {
			t.Errorf("connected %d times; a closed session must not reconnect", n)
		}
	})
}

func TestLogHook(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, tr Transport) {
		f := newFake(t, tr, func(cmd string) fakeAnswer {
			return fakeAnswer{out: "ok", logs: []string{"first " + cmd, "second " + cmd}}
		})
		var mu sync.Mutex
		var got []string
		s := dialFake(t, f, WithLog(func(l string) {
			mu.Lock()
			got = append(got, l)
			mu.Unlock()
		}))
		r, err := s.Run(testCtx(t), "a")
		must(t, err)
		if want := []string{"first a", "second a"}; fmt.Sprint(r.Log) != fmt.Sprint(want) {
			t.Errorf("Log = %q, want %q", r.Log, want)
		}
		mu.Lock()
		defer mu.Unlock()
		if want := []string{"first a", "second a"}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("the hook got %q, want %q (and not the banner)", got, want)
		}
	})
}

// TestReadRetriedAfterDrop drops the connection while a memory read runs,
// after OpenOCD echoed it: a read is safe to repeat, so it is sent again on
// a new connection and returns the value; a raw command in the same spot is
// not repeated (see TestReconnect).
func TestReadRetriedAfterDrop(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, tr Transport) {
		for _, drop := range []fakeAnswer{{closeAfterEcho: true}, {closeBeforeEcho: true}, {hang: true}} {
			var mu sync.Mutex
			reads := 0
			f := newFake(t, tr, func(cmd string) fakeAnswer {
				if !strings.HasPrefix(cmd, "read_memory") {
					return echoHandler(cmd)
				}
				mu.Lock()
				defer mu.Unlock()
				reads++
				if reads == 1 {
					return drop
				}
				return fakeAnswer{out: "0x2a"}
			})
			s := dialFake(t, f)
			if drop.hang {
				// A hang is cut by the connection dropping, from outside.
				go func() {
					for {
						mu.Lock()
						n := reads
						mu.Unlock()
						if n > 0 {
							f.dropAll()
							return
						}
						time.Sleep(5 * time.Millisecond)
					}
				}()
			}
			var vals []uint64
			var err error
			within(t, 10*time.Second, "a read on a dropped connection", func() { vals, err = s.ReadMemory(testCtx(t), 0x20000000, 32, 1) })
			if err != nil || len(vals) != 1 || vals[0] != 0x2a {
				t.Errorf("%+v: got %v, %v, want [0x2a]", drop, vals, err)
			}
			if reads != 2 || f.dialCount() != 2 {
				t.Errorf("%+v: read sent %d times on %d connections, want 2 and 2", drop, reads, f.dialCount())
			}
		}
	})
}

// TestWriteNotRetriedOnceSent drops the connection after OpenOCD echoed a
// memory write: the write may have happened, so it is not sent again and
// the error says its effect is unknown.
func TestWriteNotRetriedOnceSent(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, tr Transport) {
		var mu sync.Mutex
		writes := 0
		f := newFake(t, tr, func(cmd string) fakeAnswer {
			if !strings.HasPrefix(cmd, "write_memory") {
				return echoHandler(cmd)
			}
			mu.Lock()
			defer mu.Unlock()
			writes++
			return fakeAnswer{closeAfterEcho: true}
		})
		s := dialFake(t, f)
		var err error
		within(t, 10*time.Second, "a write on a dropped connection", func() { err = s.WriteMemory(testCtx(t), 0x20000000, 32, []uint64{1}) })
		if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "its effect is unknown") {
			t.Errorf("got %v, want ErrUnavailable saying the effect is unknown", err)
		}
		mu.Lock()
		defer mu.Unlock()
		if writes != 1 {
			t.Errorf("the write was sent %d times, want 1", writes)
		}
	})
}
