package jtag

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/sim"
	"github.com/hilrun/hilrun/pkg/testenv"
)

// These tests drive the board with the real OpenOCD, the way hilrun does.
// They skip when openocd is not installed, except under CI=true, where a
// missing tool is a broken environment.

// openocdPath returns the openocd binary to test with.
func openocdPath(t testing.TB) string {
	t.Helper()
	return testenv.NeedTool(t, "openocd", "apt-get install openocd")
}

// ocd is a running OpenOCD connected to a Server.
type ocd struct {
	cmd        *exec.Cmd
	log        *testenv.Buffer
	done       chan struct{} // closed when the process has exited
	telnetAddr string
	dir        string // OpenOCD's working directory
}

func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startOpenOCD starts openocd on the Server at bitbangAddr and returns it
// once its telnet port answers with a prompt, with a telnet client
// connected. The process is killed and reaped when the test ends.
func startOpenOCD(t testing.TB, bitbangAddr string) (*ocd, *telnet) {
	t.Helper()
	bin := openocdPath(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "board.cfg")
	if err := os.WriteFile(cfg, []byte(OpenOCDConfig(bitbangAddr)), 0o644); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	o := &ocd{
		cmd: exec.Command(bin, "-f", cfg,
			"-c", fmt.Sprintf("telnet_port %d", port),
			"-c", "gdb_port disabled",
			"-c", "tcl_port disabled"),
		log:        &testenv.Buffer{},
		done:       make(chan struct{}),
		telnetAddr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		dir:        dir,
	}
	o.cmd.Dir = dir
	// OpenOCD keeps its telnet history in $HOME.
	o.cmd.Env = append(os.Environ(), "HOME="+dir)
	o.cmd.Stdout = o.log
	o.cmd.Stderr = o.log
	setProcAttr(o.cmd)
	if err := o.cmd.Start(); err != nil {
		t.Fatalf("start openocd: %v", err)
	}
	go func() {
		o.cmd.Wait()
		close(o.done)
	}()
	t.Cleanup(o.stop)

	deadline := time.Now().Add(ioTimeout)
	for {
		tn, err := o.dial(t)
		if err == nil {
			return o, tn
		}
		select {
		case <-o.done:
			t.Fatalf("openocd exited before its telnet port opened:\n%s", o.log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("openocd telnet port %s not open after %v: %v\n%s", o.telnetAddr, ioTimeout, err, o.log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// dial connects a telnet client and reads the banner up to the first
// prompt.
func (o *ocd) dial(t testing.TB) (*telnet, error) {
	t.Helper()
	c, err := net.DialTimeout("tcp", o.telnetAddr, time.Second)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { c.Close() })
	tn := &telnet{t: t, c: c}
	tn.banner = tn.readPrompt()
	return tn, nil
}

// stop kills OpenOCD and waits for it, so no test leaves it running.
func (o *ocd) stop() {
	select {
	case <-o.done:
		return
	default:
	}
	o.cmd.Process.Kill()
	<-o.done
}

// telnet is just enough of a client for OpenOCD's telnet server: it sends
// a command line and reads up to the next prompt.
type telnet struct {
	t      testing.TB
	c      net.Conn
	banner []byte
	buf    []byte
}

const prompt = "\r> "

// readPrompt returns the bytes up to and including the next prompt.
func (tn *telnet) readPrompt() []byte {
	tn.t.Helper()
	tn.c.SetReadDeadline(time.Now().Add(ioTimeout))
	p := make([]byte, 4096)
	for {
		if i := bytes.Index(tn.buf, []byte(prompt)); i >= 0 {
			out := tn.buf[:i+len(prompt)]
			tn.buf = append([]byte(nil), tn.buf[i+len(prompt):]...)
			return out
		}
		n, err := tn.c.Read(p)
		tn.buf = append(tn.buf, p[:n]...)
		if err != nil {
			tn.t.Fatalf("telnet: read: %v (have %q)", err, tn.buf)
		}
	}
}

// raw sends line and returns everything up to the prompt, as received.
func (tn *telnet) raw(line string) []byte {
	tn.t.Helper()
	tn.c.SetWriteDeadline(time.Now().Add(ioTimeout))
	if _, err := tn.c.Write([]byte(line + "\n")); err != nil {
		tn.t.Fatalf("telnet: send %q: %v", line, err)
	}
	return tn.readPrompt()
}

// cmd sends line and returns its output: without the echo, the NULs
// OpenOCD sends after line ends or the prompt, with "\n" line ends and no
// surrounding space.
func (tn *telnet) cmd(line string) string {
	tn.t.Helper()
	out := string(tn.raw(line))
	if i := strings.Index(out, "\r\n"); i >= 0 {
		out = out[i+2:]
	}
	out = strings.TrimSuffix(out, prompt)
	out = strings.ReplaceAll(out, "\x00", "")
	out = strings.ReplaceAll(out, "\r\n", "\n")
	return strings.TrimSpace(out)
}

// words parses mdw/mdh/mdb output ("0xADDR: v v v") into values.
func words(t testing.TB, out string) []uint32 {
	t.Helper()
	var vs []uint32
	for _, line := range strings.Split(out, "\n") {
		_, rest, ok := strings.Cut(line, ": ")
		if !ok {
			t.Fatalf("not memory display output: %q", out)
		}
		for _, f := range strings.Fields(rest) {
			v, err := strconv.ParseUint(f, 16, 32)
			if err != nil {
				t.Fatalf("not memory display output: %q: %v", out, err)
			}
			vs = append(vs, uint32(v))
		}
	}
	return vs
}

func word(t testing.TB, out string) uint32 {
	t.Helper()
	vs := words(t, out)
	if len(vs) != 1 {
		t.Fatalf("want one value, got %q", out)
	}
	return vs[0]
}

// board is a memory served over remote_bitbang with OpenOCD attached.
type board struct {
	mem *sim.Memory
	srv *Server
	ocd *ocd
	tn  *telnet
}

func startBoard(t testing.TB) *board {
	t.Helper()
	openocdPath(t) // skip before starting anything
	mem := sim.NewMemory()
	srv, err := Serve(context.Background(), mem, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	o, tn := startOpenOCD(t, srv.Addr())
	return &board{mem: mem, srv: srv, ocd: o, tn: tn}
}

func TestOpenOCD(t *testing.T) {
	b := startBoard(t)
	tn := b.tn
	if !bytes.Contains(tn.banner, []byte("Open On-Chip Debugger")) {
		t.Errorf("telnet banner = %q", tn.banner)
	}

	t.Run("mdw reads ODR", func(t *testing.T) {
		b.mem.Write(sim.GPIOODR, 32, 0x1234)
		if got := word(t, tn.cmd("mdw 0x48000014")); got != 0x1234 {
			t.Errorf("ODR = %#x, want 0x1234", got)
		}
	})

	t.Run("mww turns the LED on", func(t *testing.T) {
		b.mem.Write(sim.GPIOODR, 32, 0)
		before := time.Now()
		if out := tn.cmd("mww 0x48000014 0x20"); out != "" {
			t.Errorf("mww printed %q", out)
		}
		after := time.Now()
		if !b.mem.LED() {
			t.Fatal("LED off after writing ODR bit 5")
		}
		var found bool
		for _, w := range b.mem.Writes() {
			if w.Addr == sim.GPIOODR && w.Width == 32 && w.Value == 0x20 {
				found = true
				if w.At.Before(before) || w.At.After(after) {
					t.Errorf("write at %v, outside the command's %v..%v", w.At, before, after)
				}
			}
		}
		if !found {
			t.Errorf("no 32-bit write of 0x20 to ODR in %+v", b.mem.Writes())
		}
		if got := word(t, tn.cmd("mdw 0x48000014")); got != 0x20 {
			t.Errorf("ODR read back = %#x", got)
		}
	})

	t.Run("counter increases", func(t *testing.T) {
		first := word(t, tn.cmd("mdw 0x20000000"))
		time.Sleep(5 * time.Millisecond)
		second := word(t, tn.cmd("mdw 0x20000000"))
		if second <= first {
			t.Errorf("counter went from %d to %d", first, second)
		}
	})

	t.Run("several words", func(t *testing.T) {
		const base = sim.RAMBase + 0x100
		want := []uint32{0xDEADBEEF, 1, 0x80000000, 0x0BADF00D}
		for i, w := range want {
			b.mem.Write(base+uint32(4*i), 32, w)
		}
		got := words(t, tn.cmd("mdw 0x20000100 4"))
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("mdw 4 = %x, want %x", got, want)
		}
		got = words(t, tn.cmd("mdw 0x20000000 4"))
		if len(got) != 4 || got[0] == 0 {
			t.Errorf("mdw 0x20000000 4 = %x, want 4 words, the counter first", got)
		}
	})

	t.Run("halfwords and bytes", func(t *testing.T) {
		const base = sim.RAMBase + 0x200
		b.mem.Write(base, 32, 0)
		tn.cmd("mwh 0x20000202 0xbeef")
		tn.cmd("mwb 0x20000201 0x5a")
		if got, _ := b.mem.Read(base, 32); got != 0xBEEF5A00 {
			t.Errorf("word after mwh, mwb = %#08x, want 0xbeef5a00", got)
		}
		if got := word(t, tn.cmd("mdh 0x20000202")); got != 0xBEEF {
			t.Errorf("mdh = %#x, want 0xbeef", got)
		}
		if got := word(t, tn.cmd("mdb 0x20000201")); got != 0x5A {
			t.Errorf("mdb = %#x, want 0x5a", got)
		}
		// Several bytes from an odd address take OpenOCD's packed path.
		if got := words(t, tn.cmd("mdb 0x20000201 3")); fmt.Sprint(got) != "[90 239 190]" {
			t.Errorf("mdb 3 = %x, want [5a ef be]", got)
		}
		ws := b.mem.Writes()
		if n := len(ws); n < 2 || ws[n-2].Width != 16 || ws[n-1].Width != 8 || ws[n-1].Addr != base+1 {
			t.Errorf("last bus writes = %+v, want a 16-bit then an 8-bit one", ws[max(0, n-2):])
		}
	})

	t.Run("bus fault on read", func(t *testing.T) {
		faults := b.srv.Stats().BusFaults
		out := tn.cmd("mdw 0x30000000")
		if !strings.Contains(out, "Failed to read memory at 0x30000000") {
			t.Errorf("mdw of unmapped memory printed %q", out)
		}
		if b.srv.Stats().BusFaults == faults {
			t.Error("no bus fault counted")
		}
		b.mem.Write(sim.GPIOODR, 32, 0x20)
		if got := word(t, tn.cmd("mdw 0x48000014")); got != 0x20 {
			t.Errorf("read after the fault = %#x, want 0x20", got)
		}
	})

	t.Run("bus fault on write", func(t *testing.T) {
		out := tn.cmd("mww 0x30000000 1")
		if !strings.Contains(out, "Failed to write memory at 0x30000000") {
			t.Errorf("mww to unmapped memory printed %q", out)
		}
		if got := word(t, tn.cmd("mdw 0x48000014")); got != 0x20 {
			t.Errorf("read after the fault = %#x, want 0x20", got)
		}
	})

	t.Run("WAIT recovery", func(t *testing.T) {
		b.mem.Write(sim.RAMBase+0x20, 32, 0x600D)
		// A failed write leaves TAR at an unmapped address. The WAIT hits
		// the TAR write of the next mdw; the DRW read OpenOCD queued
		// behind it must not run with the stale TAR.
		tn.cmd("mww 0x30000000 1")
		before := b.srv.Stats()
		b.srv.InjectWait(1)
		out := tn.cmd("mdw 0x20000020")
		// OpenOCD says it retried, then prints the value.
		log, value, _ := strings.Cut(out, "\n")
		if log != "DAP transaction stalled (WAIT) - slowing down and resending" {
			t.Errorf("mdw through a WAIT printed %q", out)
		}
		if got := word(t, value); got != 0x600D {
			t.Errorf("mdw through a WAIT = %#x, want 0x600d", got)
		}
		after := b.srv.Stats()
		if after.Waits != before.Waits+1 {
			t.Error("no WAIT given")
		}
		if after.BusFaults != before.BusFaults {
			t.Errorf("%d bus faults during the retried mdw", after.BusFaults-before.BusFaults)
		}
	})

	t.Run("load, verify and dump an image", func(t *testing.T) {
		dir := t.TempDir()
		img := make([]byte, 1001) // odd length: OpenOCD ends with narrower writes
		for i := range img {
			img[i] = byte(i*7 + i>>8)
		}
		in := filepath.Join(dir, "in.bin")
		outPath := filepath.Join(dir, "out.bin")
		if err := os.WriteFile(in, img, 0o644); err != nil {
			t.Fatal(err)
		}
		out := tn.cmd("load_image " + in + " 0x20001000 bin")
		if !strings.Contains(out, "downloaded 1001 bytes") {
			t.Errorf("load_image printed %q", out)
		}
		got := make([]byte, len(img))
		if err := b.mem.ReadBlock(0x20001000, got); err != nil || !bytes.Equal(got, img) {
			t.Errorf("memory after load_image differs from the image (%v)", err)
		}
		if out := tn.cmd("dump_image " + outPath + " 0x20001000 1001"); !strings.Contains(out, "dumped 1001 bytes") {
			t.Errorf("dump_image printed %q", out)
		}
		dumped, err := os.ReadFile(outPath)
		if err != nil || !bytes.Equal(dumped, img) {
			t.Errorf("dump_image wrote %d bytes, want the image (%v)", len(dumped), err)
		}

		// OpenOCD 0.12 verifies with the target's checksum_memory, which
		// mem_ap targets lack; later versions fall back to reading the
		// memory. Either way a verification must never pass wrongly.
		const unsupported = "Target sim.mem doesn't support checksum_memory"
		out = tn.cmd("verify_image " + in + " 0x20001000 bin")
		if out != unsupported && !strings.Contains(out, "verified 1001 bytes") {
			t.Errorf("verify_image printed %q", out)
		}
		b.mem.Write(0x20001000+500, 8, uint32(img[500])^0xFF)
		out = tn.cmd("verify_image " + in + " 0x20001000 bin")
		if out != unsupported && !strings.Contains(out, "diff 0 address 0x200011f4") {
			t.Errorf("verify_image of a changed image printed %q", out)
		}
	})

	t.Run("reset asserts SRST", func(t *testing.T) {
		// OpenOCD resets the board through the adapter's SRST line, which
		// reaches the memory map's reset and its hooks (a hung board
		// boots again), as the board's own reset does.
		var hooks atomic.Int32
		remove := b.mem.OnReset(func() { hooks.Add(1) })
		defer remove()
		b.mem.Write(sim.RAMBase+0x40, 32, 0xF00D)
		before := b.srv.Stats().SystemResets
		if out := tn.cmd("reset run"); strings.Contains(out, "rror") {
			t.Errorf("reset run printed %q", out)
		}
		if n := b.srv.Stats().SystemResets - before; n != 1 {
			t.Errorf("reset run asserted SRST %d times, want once", n)
		}
		if n := hooks.Load(); n != 1 {
			t.Errorf("reset hooks ran %d times, want once", n)
		}
		if got := word(t, tn.cmd("mdw 0x20000040")); got == 0xF00D {
			t.Error("RAM kept its value across reset run")
		}
	})

	st := b.srv.Stats()
	if st.Connections != 1 || st.APReads == 0 || st.APWrites == 0 || st.BusFaults < 2 {
		t.Errorf("stats after the session = %+v", st)
	}
	t.Logf("stats: %+v", st)
}

// A second OpenOCD after the first has gone finds the board as it was.
func TestOpenOCDReconnect(t *testing.T) {
	b := startBoard(t)
	b.tn.cmd("mww 0x20000008 0xcafe")
	b.ocd.stop()

	_, tn := startOpenOCD(t, b.srv.Addr())
	if got := word(t, tn.cmd("mdw 0x20000008")); got != 0xCAFE {
		t.Errorf("after reconnecting, mdw = %#x, want 0xcafe", got)
	}
	if n := b.srv.Stats().Connections; n != 2 {
		t.Errorf("connections = %d, want 2", n)
	}
}

// BenchmarkMDW measures one mdw through OpenOCD's telnet port: telnet
// round trip, OpenOCD's command handling and the remote_bitbang traffic.
// It also reports the remote_bitbang bytes and the JTAG queue runs (each
// at least one TCP round trip) one mdw costs.
func BenchmarkMDW(b *testing.B) {
	bd := startBoard(b)
	before := bd.srv.Stats()
	n := 0
	for b.Loop() {
		bd.tn.raw("mdw 0x20000004")
		n++
	}
	after := bd.srv.Stats()
	b.ReportMetric(float64(after.Commands-before.Commands)/float64(n), "bitbang-bytes/op")
	b.ReportMetric(float64(after.Blinks-before.Blinks)/float64(n), "queues/op")
}
