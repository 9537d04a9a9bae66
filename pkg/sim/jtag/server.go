// Package jtag gives hilrun's virtual board a JTAG port that OpenOCD can
// drive.
//
// Serve listens on TCP and speaks OpenOCD's remote_bitbang protocol: one
// ASCII byte per pin change. Behind it sit an IEEE 1149.1 TAP controller
// with a 4-bit instruction register, an ARM ADIv5 JTAG-DP and a MEM-AP at
// AP index 0 (an AHB-AP) whose bus is a sim.Memory. OpenOCDConfig returns
// the configuration that makes OpenOCD treat the board as a mem_ap target,
// so mdw, mww, load_image and friends read and write the board's memory.
//
// An access the memory refuses (sim.ErrBusFault) sets STICKYERR in the
// DP's CTRL/STAT register, which is how OpenOCD learns a transfer failed.
package jtag

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hilrun/hilrun/pkg/sim"
)

// Stats counts what a Server has done since Serve. All counts are totals
// over every connection.
type Stats struct {
	// Connections is the number of clients served; Rejected the number
	// turned away because another client was connected.
	Connections, Rejected int64
	// Commands is the number of protocol bytes received; Reads the number
	// of TDO samples ('R') answered.
	Commands, Reads int64
	// IRScans and DRScans count passes through Update-IR and Update-DR.
	IRScans, DRScans int64
	// DPReads, DPWrites, APReads and APWrites count DPACC and APACC
	// requests the debug port took, including AP requests it discarded
	// because a sticky flag was set; requests answered with WAIT are not
	// counted.
	DPReads, DPWrites, APReads, APWrites int64
	// Aborts counts writes to the ABORT register.
	Aborts int64
	// BusReads and BusWrites count memory transfers that succeeded;
	// BusFaults those the memory refused, each of which set STICKYERR.
	BusReads, BusWrites, BusFaults int64
	// Waits counts WAIT acknowledgements given (see InjectWait).
	Waits int64
	// SystemResets counts assertions of SRST.
	SystemResets int64
	// Blinks counts 'B' commands: OpenOCD sends one each time it starts
	// executing a queue of JTAG commands.
	Blinks int64
}

// counters are Stats as they are being counted.
type counters struct {
	connections, rejected                atomic.Int64
	commands, reads                      atomic.Int64
	irScans, drScans                     atomic.Int64
	dpReads, dpWrites, apReads, apWrites atomic.Int64
	aborts                               atomic.Int64
	busReads, busWrites, busFaults       atomic.Int64
	waits, srsts, blinks                 atomic.Int64
}

func (c *counters) snapshot() Stats {
	return Stats{
		Connections:  c.connections.Load(),
		Rejected:     c.rejected.Load(),
		Commands:     c.commands.Load(),
		Reads:        c.reads.Load(),
		IRScans:      c.irScans.Load(),
		DRScans:      c.drScans.Load(),
		DPReads:      c.dpReads.Load(),
		DPWrites:     c.dpWrites.Load(),
		APReads:      c.apReads.Load(),
		APWrites:     c.apWrites.Load(),
		Aborts:       c.aborts.Load(),
		BusReads:     c.busReads.Load(),
		BusWrites:    c.busWrites.Load(),
		BusFaults:    c.busFaults.Load(),
		Waits:        c.waits.Load(),
		SystemResets: c.srsts.Load(),
		Blinks:       c.blinks.Load(),
	}
}

// Server is a remote_bitbang server in front of the board's JTAG port. It
// serves one client at a time; a client that connects while another is
// connected is disconnected at once. Clients may disconnect and reconnect:
// the debug port keeps its state across connections, as a board does when
// the probe is unplugged.
type Server struct {
	ln    net.Listener
	stats counters
	waits atomic.Int64

	// portMu is held by the connection being served, for its lifetime.
	portMu sync.Mutex
	port   *port

	mu     sync.Mutex
	conn   net.Conn // the client being served, or nil
	closed bool
	err    error

	stopAfter func() bool // unregisters the context's AfterFunc
	wg        sync.WaitGroup
}

// Serve listens on addr ("127.0.0.1:0" picks a free port) and serves the
// board's JTAG port on it until ctx is done or Close is called. mem is the
// memory the MEM-AP reaches.
func Serve(ctx context.Context, mem *sim.Memory, addr string) (*Server, error) {
	if mem == nil {
		return nil, errors.New("serve jtag: no memory")
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("serve jtag: %w", err)
	}
	s := &Server{ln: ln}
	s.port = newPort(mem, &s.stats, &s.waits)
	s.stopAfter = context.AfterFunc(ctx, func() { s.Close() })
	s.wg.Add(1)
	go s.acceptLoop()
	return s, nil
}

// Addr returns the address the server listens on, as host:port.
func (s *Server) Addr() string {
	return s.ln.Addr().String()
}

// Stats returns the server's counters.
func (s *Server) Stats() Stats {
	return s.stats.snapshot()
}

// InjectWait makes the next n DPACC or APACC scans capture a WAIT
// acknowledgement instead of OK, as a debug port does while a slow memory
// access is in progress; the requests in those scans are ignored. It lets
// tests exercise a debugger's WAIT recovery. n <= 0 cancels pending WAITs.
func (s *Server) InjectWait(n int) {
	if n < 0 {
		n = 0
	}
	s.waits.Store(int64(n))
}

// Close stops the server: it closes the listener and the client's
// connection and waits for the connection to finish. Calling it again
// returns the first call's result.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.wg.Wait()
		return s.err
	}
	s.closed = true
	if err := s.ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
		s.err = fmt.Errorf("close jtag server: %w", err)
	}
	if s.conn != nil {
		s.conn.Close()
	}
	s.mu.Unlock()
	s.stopAfter()
	s.wg.Wait()
	return s.err
}

func (s *Server) acceptLoop() {
	defer s.wg.Done()
	var backoff time.Duration
	for {
		c, err := s.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors or the like: wait for it to pass,
			// as net/http does, rather than stop serving.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		s.mu.Lock()
		if s.closed || s.conn != nil {
			s.mu.Unlock()
			s.stats.rejected.Add(1)
			c.Close()
			continue
		}
		s.conn = c
		s.mu.Unlock()
		s.stats.connections.Add(1)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serveConn(c)
			c.Close()
			s.mu.Lock()
			s.conn = nil
			s.mu.Unlock()
		}()
	}
}

// serveConn runs the remote_bitbang protocol on c until the client quits,
// disconnects or the server closes.
//
// OpenOCD queues many commands before it waits for the TDO samples it asked
// for, so replies are buffered and only flushed when no more input is
// already here: then the client has sent everything it will send before
// reading, and waiting longer would deadlock.
func (s *Server) serveConn(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		// Each flush ends a batch the client is waiting for.
		tc.SetNoDelay(true)
	}
	s.portMu.Lock()
	defer s.portMu.Unlock()
	r := bufio.NewReaderSize(c, 64<<10)
	w := bufio.NewWriterSize(c, 4<<10)
	var n int64 // commands not yet added to the counter
	defer func() { s.stats.commands.Add(n) }()
	for {
		if r.Buffered() == 0 {
			s.stats.commands.Add(n)
			n = 0
			if w.Flush() != nil {
				return
			}
		}
		b, err := r.ReadByte()
		if err != nil {
			return // the client went away, or Close closed c
		}
		n++
		if quit := s.command(b, w); quit {
			w.Flush()
			return
		}
	}
}

// command executes one remote_bitbang command byte, buffering any reply in
// w. It reports whether the client asked to quit.
func (s *Server) command(b byte, w *bufio.Writer) (quit bool) {
	p := s.port
	switch {
	case b >= '0' && b <= '7':
		v := b - '0'
		p.setPins(v&4 != 0, v&2 != 0, v&1 != 0)
	case b == 'R':
		s.stats.reads.Add(1)
		if p.tdo() {
			w.WriteByte('1')
		} else {
			w.WriteByte('0')
		}
	case b >= 'r' && b <= 'u':
		v := b - 'r'
		p.setReset(v&2 != 0, v&1 != 0)
	case b == 'B':
		s.stats.blinks.Add(1)
	case b == 'b':
	case b == 'Q':
		return true
	case b == 'c':
		// SWDIO read, from newer OpenOCDs' SWD mode, which this port does
		// not have. Answering keeps such a client in step; the line reads
		// high, as an undriven SWDIO with its pull-up does.
		w.WriteByte('1')
	default:
		// 'Z' and 'z' (sleep 1 ms / 1 us) need no action: the board has no
		// timing to honour between pin changes. 'O', 'o' and 'd'-'g' are
		// SWD pin commands. Line ends and other bytes are ignored, as
		// OpenOCD's reference server does.
	}
	return false
}
