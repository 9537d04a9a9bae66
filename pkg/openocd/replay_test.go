package openocd

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Recordings of real sessions live in testdata/telnet/*.txt (telnet) and
// testdata/tclrpc/*.txt (Tcl RPC), one event a line, in the order the
// client saw them:
//
//	# a comment: how the recording was made
//	= connect                 a new connection begins
//	> "line the client sent\n"
//	< "bytes one Read returned"
//
// Byte strings are Go-quoted. TestRecord makes them (HILRUN_RECORD=1) by
// running the scenarios below against the real openocd through a
// recordingConn; TestReplay runs the same scenarios against a server that
// plays the recordings back, checking that the client sends exactly what
// it sent then and that every recorded byte was used.

type event struct {
	dir  byte // '>' client to server, '<' server to client, '=' new connection
	data []byte
}

// recording is the events of one file, split by connection.
type recording struct {
	conns [][]event
}

func parseRecording(r io.Reader) (*recording, error) {
	rec := &recording{}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case line == "= connect":
			rec.conns = append(rec.conns, nil)
		case strings.HasPrefix(line, "> ") || strings.HasPrefix(line, "< "):
			s, err := strconv.Unquote(line[2:])
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", n, err)
			}
			if len(rec.conns) == 0 {
				return nil, fmt.Errorf("line %d: event before \"= connect\"", n)
			}
			c := &rec.conns[len(rec.conns)-1]
			*c = append(*c, event{dir: line[0], data: []byte(s)})
		default:
			return nil, fmt.Errorf("line %d: unexpected %q", n, line)
		}
	}
	return rec, sc.Err()
}

// recorder collects the events of the connections it wraps.
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) add(dir byte, data []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if dir == '=' {
		r.events = append(r.events, "= connect")
		return
	}
	r.events = append(r.events, string(dir)+" "+strconv.Quote(string(data)))
}

// dialer returns a dial function whose connections are recorded.
func (r *recorder) dialer() func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		r.add('=', nil)
		return &recordingConn{Conn: c, rec: r}, nil
	}
}

func (r *recorder) write(path string, notes []string) error {
	var b bytes.Buffer
	for _, n := range notes {
		b.WriteString("# " + n + "\n")
	}
	r.mu.Lock()
	for _, e := range r.events {
		b.WriteString(e + "\n")
	}
	r.mu.Unlock()
	return os.WriteFile(path, b.Bytes(), 0o644)
}

type recordingConn struct {
	net.Conn
	rec *recorder
}

func (c *recordingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.rec.add('<', p[:n])
	}
	return n, err
}

func (c *recordingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if n > 0 {
		c.rec.add('>', p[:n])
	}
	return n, err
}

// replayer is a fake OpenOCD that plays a recording back, one connection
// per dial. With split, it sends every recorded read one byte at a time.
type replayer struct {
	t     testing.TB
	rec   *recording
	split bool

	mu    sync.Mutex
	next  int // connection to serve at the next dial
	errs  []error
	wg    sync.WaitGroup
	used  []bool     // per connection: all events played
	conns []net.Conn // the server ends
}

func newReplayer(t testing.TB, rec *recording, split bool) *replayer {
	r := &replayer{t: t, rec: rec, split: split, used: make([]bool, len(rec.conns))}
	t.Cleanup(r.check)
	return r
}

func (r *replayer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	r.mu.Lock()
	i := r.next
	r.next++
	r.mu.Unlock()
	if i >= len(r.rec.conns) {
		return nil, fmt.Errorf("dial %s: connection refused (the recording has %d connections)", addr, len(r.rec.conns))
	}
	client, server := net.Pipe()
	r.mu.Lock()
	r.conns = append(r.conns, server)
	r.mu.Unlock()
	r.wg.Add(1)
	go r.serve(i, server)
	return client, nil
}

// serve plays connection i's events on c.
func (r *replayer) serve(i int, c net.Conn) {
	defer r.wg.Done()
	defer c.Close()
	// Writes go through a queue, so that the client may send its next
	// line before it has read all of the previous reply, as over TCP.
	out := make(chan []byte, 1024)
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		for b := range out {
			if r.split {
				for j := range b {
					if _, err := c.Write(b[j : j+1]); err != nil {
						return
					}
				}
			} else if _, err := c.Write(b); err != nil {
				return
			}
		}
	}()
	fail := func(err error) {
		r.mu.Lock()
		r.errs = append(r.errs, fmt.Errorf("connection %d: %w", i+1, err))
		r.mu.Unlock()
	}
	for k, e := range r.rec.conns[i] {
		switch e.dir {
		case '<':
			out <- e.data
		case '>':
			got := make([]byte, len(e.data))
			if _, err := io.ReadFull(c, got); err != nil {
				close(out)
				<-wrote
				fail(fmt.Errorf("event %d: want the client to send %q: %v", k+1, e.data, err))
				return
			}
			if !bytes.Equal(got, e.data) {
				close(out)
				<-wrote
				fail(fmt.Errorf("event %d: client sent %q, want %q", k+1, got, e.data))
				return
			}
		}
	}
	close(out)
	<-wrote
	r.mu.Lock()
	r.used[i] = true
	r.mu.Unlock()
	// The recording ends as the client's use of the connection did: keep
	// it open until the client closes it.
	io.Copy(io.Discard, c)
}

// check fails the test if the client did not use the whole recording.
// It runs when the test ends, and ends the connections first.
func (r *replayer) check() {
	r.mu.Lock()
	for _, c := range r.conns {
		c.Close()
	}
	r.mu.Unlock()
	r.wg.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, err := range r.errs {
		r.t.Error(err)
	}
	if r.next < len(r.rec.conns) {
		r.t.Errorf("the client made %d connections, the recording has %d", r.next, len(r.rec.conns))
	}
	for i, u := range r.used[:min(r.next, len(r.used))] {
		if !u {
			r.t.Errorf("connection %d: the client did not use all of the recording", i+1)
		}
	}
}

// scenario is a use of a session that is recorded against the real
// openocd and replayed against its recording, with the same checks.
type scenario struct {
	name  string
	notes []string
	// side, if set, runs alongside the recording against the real
	// openocd at addr: another client, say. It is not replayed.
	side func(t testing.TB, addr string)
	run  func(t testing.TB, s *Session, side func())
}

// memBase is RAM the scenarios write: above the firmware's variables, so
// that nothing changes it behind the test's back.
const memBase = 0x20000100

var scenarios = []scenario{
	{
		name: "memory",
		notes: []string{
			"Connect, the version handshake, write_memory and read_memory of 8, 16",
			"and 32 bits, mdw's multi-line output. Shows the option negotiation, the",
			"banner, echoes arriving in pieces, NULs after CR LF and the prompt.",
		},
		run: func(t testing.TB, s *Session, _ func()) {
			ctx := testCtx(t)
			must(t, s.WriteMemory(ctx, memBase, 32, []uint64{0x11223344, 0x55667788, 0xdeadbeef}))
			want32 := []uint64{0x11223344, 0x55667788, 0xdeadbeef}
			checkValues(t, s, memBase, 32, want32)
			checkValues(t, s, memBase, 16, []uint64{0x3344, 0x1122, 0x7788, 0x5566})
			checkValues(t, s, memBase+1, 8, []uint64{0x33, 0x22, 0x11})
			must(t, s.WriteMemory(ctx, memBase+2, 8, []uint64{0xab}))
			checkValues(t, s, memBase, 32, []uint64{0x11ab3344})
			out, err := s.Command(ctx, "mdw 0x20000100 10")
			must(t, err)
			want := "0x20000100: 11ab3344 55667788 deadbeef 00000000 00000000 00000000 00000000 00000000 \n" +
				"0x20000120: 00000000 00000000 \n"
			if out != want {
				t.Errorf("mdw printed %q, want %q", out, want)
			}
		},
	},
	{
		name: "errors",
		notes: []string{
			"A bus fault: OpenOCD logs three lines between the echo and the frame.",
			"An unknown command, a syntax error that prints the usage, and a Tcl",
			"error; the session goes on working after each.",
		},
		run: func(t testing.TB, s *Session, _ func()) {
			ctx := testCtx(t)
			_, err := s.ReadMemory(ctx, 0x30000000, 32, 1)
			checkCommandError(t, err, "read_memory 0x30000000 32 1",
				"JTAG-DP STICKY ERROR\n"+
					"Failed to read memory at 0x30000000\n"+
					"read_memory: read at 0x30000000 with width=32 and count=1 failed\n"+
					"read_memory: failed to read memory")
			must(t, s.WriteMemory(ctx, memBase, 32, []uint64{42}))
			checkValues(t, s, memBase, 32, []uint64{42})
			_, err = s.Command(ctx, "foo")
			checkCommandError(t, err, "foo", `invalid command name "foo"`)
			_, err = s.Command(ctx, "mww")
			checkCommandError(t, err, "mww", "mww ['phys'] address value [count]\n  sim.mem mww address data [count]")
			_, err = s.Command(ctx, `error "it went wrong"`)
			checkCommandError(t, err, `error "it went wrong"`, "it went wrong")
			checkValues(t, s, memBase, 32, []uint64{42})
		},
	},
	{
		name: "async",
		notes: []string{
			"While the session is idle another telnet client runs echo: OpenOCD",
			"sends the message to every session, erasing and redrawing the prompt",
			"around it, and the session reads it with its next command's reply.",
		},
		side: func(t testing.TB, addr string) {
			c, err := net.DialTimeout("tcp", addr, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(5 * time.Second))
			fmt.Fprintf(c, "echo {target state: halted by someone else}\n")
			buf := make([]byte, 4096)
			var got []byte
			for !bytes.Contains(got, []byte("someone else}\r\n")) || !bytes.HasSuffix(got, []byte("> ")) {
				n, err := c.Read(buf)
				got = append(got, buf[:n]...)
				if err != nil {
					t.Fatalf("side client: %v after %q", err, got)
				}
			}
			time.Sleep(100 * time.Millisecond) // for the message to reach the session's socket
		},
		run: func(t testing.TB, s *Session, side func()) {
			ctx := testCtx(t)
			must(t, s.WriteMemory(ctx, memBase, 16, []uint64{0x1234}))
			side()
			r, err := s.Run(ctx, "read_memory 0x20000100 16 1")
			must(t, err)
			if r.Result != "0x1234" {
				t.Errorf("read_memory printed %q, want 0x1234", r.Result)
			}
			if len(r.Log) != 0 {
				t.Errorf("a message logged before the command was sent is in its log: %q", r.Log)
			}
			r, err = s.Run(ctx, "echo {during the command}; return done")
			must(t, err)
			if r.Result != "done" || len(r.Log) != 1 || r.Log[0] != "during the command" {
				t.Errorf("got %+v, want the result done and the log line \"during the command\"", r)
			}
		},
	},
}

var moreScenarios = []scenario{
	{
		name: "control",
		notes: []string{
			"halt, resume and reset: the virtual board's reset logs the JTAG scan.",
		},
		run: func(t testing.TB, s *Session, _ func()) {
			ctx := testCtx(t)
			must(t, s.Halt(ctx))
			must(t, s.Resume(ctx))
			must(t, s.Reset(ctx, "halt"))
			must(t, s.Reset(ctx, "run"))
			out, err := s.Command(ctx, "targets")
			must(t, err)
			if !strings.Contains(out, "sim.mem") {
				t.Errorf("targets printed %q, want the sim.mem target", out)
			}
		},
	},
	{
		name: "stale",
		notes: []string{
			"A request that times out (sleep 300 given 100 ms), then the next request",
			"on the same connection: its reply arrives after the stale one, which the",
			"sequence numbers tell apart. (Session drops a connection on a timeout;",
			"the scenario keeps it to exercise the check.)",
		},
		run: func(t testing.TB, s *Session, _ func()) {
			s.mu.Lock()
			c := s.conn
			s.mu.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			s.seq++
			line, err := s.encode(s.seq, "sleep 300; return slow")
			must(t, err)
			_, _, _, err = s.roundTrip(ctx, c, s.seq, line)
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("the slow request: got %v, want a timeout", err)
			}
			s.seq++
			line, err = s.encode(s.seq, "return fast")
			must(t, err)
			r, _, _, err := s.roundTrip(testCtx(t), c, s.seq, line)
			must(t, err)
			if r.out != "fast" || r.seq != s.seq {
				t.Errorf("got reply %+v, want request %d's, fast", r, s.seq)
			}
		},
	},
}

func init() { scenarios = append(scenarios, moreScenarios...) }

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func checkValues(t testing.TB, s *Session, addr uint64, width int, want []uint64) {
	t.Helper()
	got, err := s.ReadMemory(testCtx(t), addr, width, len(want))
	if err != nil {
		t.Fatalf("read %d-bit at 0x%x: %v", width, addr, err)
	}
	if fmt.Sprintf("%#x", got) != fmt.Sprintf("%#x", want) {
		t.Errorf("read %d-bit at 0x%x: got %#x, want %#x", width, addr, got, want)
	}
}

func checkCommandError(t testing.TB, err error, cmd, output string) {
	t.Helper()
	var ce *CommandError
	if !errors.As(err, &ce) {
		t.Fatalf("%s: got error %v, want a *CommandError", cmd, err)
	}
	if ce.Cmd != cmd || ce.Output != output {
		t.Errorf("%s: got CommandError{Cmd: %q, Output: %q}, want {%q, %q}", cmd, ce.Cmd, ce.Output, cmd, output)
	}
	if errors.Is(err, ErrUnavailable) {
		t.Errorf("%s: a CommandError must not wrap ErrUnavailable", cmd)
	}
}

func recordingPath(tr Transport, name string) string {
	dir := "telnet"
	if tr == TclRPC {
		dir = "tclrpc"
	}
	return filepath.Join("testdata", dir, name+".txt")
}

// TestRecord records the scenarios against the real openocd and the
// virtual board, over each transport. It only runs with HILRUN_RECORD=1.
func TestRecord(t *testing.T) {
	if os.Getenv("HILRUN_RECORD") != "1" {
		t.Skip("set HILRUN_RECORD=1 to record testdata/telnet/ and testdata/tclrpc/ against the real openocd")
	}
	version := openocdVersion(t)
	for _, tr := range transports {
		for _, sc := range scenarios {
			t.Run(tr.String()+"/"+sc.name, func(t *testing.T) {
				b := startBoard(t)
				var rec recorder
				s := b.dialOver(t, tr, WithDialer(rec.dialer()))
				side := func() {}
				if sc.side != nil {
					side = func() { sc.side(t, b.proc.TelnetAddr()) }
				}
				sc.run(t, s, side)
				s.Close()
				notes := append([]string{
					"Recorded by TestRecord (HILRUN_RECORD=1 go test -run TestRecord ./pkg/openocd/)",
					"from " + version + " driving hilrun's virtual board (pkg/sim/jtag), over " + tr.String() + ".",
				}, sc.notes...)
				path := recordingPath(tr, sc.name)
				must(t, os.MkdirAll(filepath.Dir(path), 0o755))
				must(t, rec.write(path, notes))
			})
		}
	}
}

// TestReplay runs the scenarios against their recordings, over each
// transport, as recorded and with every read split into single bytes.
func TestReplay(t *testing.T) {
	for _, tr := range transports {
		for _, sc := range scenarios {
			for _, split := range []bool{false, true} {
				name := tr.String() + "/" + sc.name
				if split {
					name += "/bytewise"
				}
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					rec := loadRecording(t, tr, sc.name)
					r := newReplayer(t, rec, split)
					s, err := Dial(testCtx(t), JoinAddr("openocd.test:4444", tr), WithDialer(r.dial))
					must(t, err)
					t.Cleanup(func() { s.Close() }) // before the replayer's check
					sc.run(t, s, func() {})
				})
			}
		}
	}
}

func loadRecording(t testing.TB, tr Transport, name string) *recording {
	t.Helper()
	f, err := os.Open(recordingPath(tr, name))
	if err != nil {
		t.Fatalf("%v (record with HILRUN_RECORD=1 go test -run TestRecord)", err)
	}
	defer f.Close()
	rec, err := parseRecording(f)
	if err != nil {
		t.Fatalf("%s: %v", recordingPath(tr, name), err)
	}
	return rec
}

// openocdVersion returns the first line of openocd --version.
func openocdVersion(t testing.TB) string {
	out, _ := exec.Command(needOpenOCD(t), "--version").CombinedOutput()
	line, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimSpace(line)
}
