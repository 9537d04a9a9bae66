package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hilrun/hilrun/pkg/openocd"
	"github.com/hilrun/hilrun/pkg/sim"
	"github.com/hilrun/hilrun/pkg/sim/jtag"
)

// Sides of the Tcl RPC benchmark.
const (
	SideTclRPC    = "hilrun over tcl-rpc"
	SideTelnet    = "hilrun over telnet"
	SideRawTclRPC = "raw tcl-rpc round trip"
)

// TclOptions configures TclRPCBench.
type TclOptions struct {
	// OpenOCD is the openocd executable.
	OpenOCD string
	// Rounds is how many times each side runs, in an order that rotates
	// from round to round; N the measured reads per side and round, after
	// Warmup unmeasured ones.
	Rounds, N, Warmup int
	// Progress, if set, receives a line per round.
	Progress func(string)
}

// TclReport is the outcome of TclRPCBench: one 32-bit read of the virtual
// board's memory through an OpenOCD that hilrun launched, by hilrun's
// session over Tcl RPC, by hilrun's session over telnet, and by a bare Tcl
// RPC round trip (read_memory and its 0x1a, nothing else) that the
// benchmark makes itself.
type TclReport struct {
	OpenOCD string `json:"openocd"`
	Rounds  int    `json:"rounds"`
	N       int    `json:"n"`
	Warmup  int    `json:"warmup"`
	// Sides summarise every measured read of each side.
	Sides []TclSide `json:"sides"`
	// Ratio is the median over rounds of each round's median read over
	// Tcl RPC divided by its median raw round trip; TelnetRatio the same
	// for telnet.
	Ratio       float64 `json:"ratio_tcl_to_raw"`
	TelnetRatio float64 `json:"ratio_telnet_to_raw"`
	// Speedup is the median over rounds of telnet's median over Tcl
	// RPC's.
	Speedup float64 `json:"speedup_tcl_over_telnet"`
}

// TclSide is one side of the Tcl RPC benchmark.
type TclSide struct {
	Side    string  `json:"side"`
	Summary Summary `json:"summary"`
	// RoundMedians are the side's median per round, in round order.
	RoundMedians []time.Duration `json:"round_medians_ns"`
}

// tclReader reads the word at addr once; it returns the value read.
type tclReader func(ctx context.Context) (uint64, error)

// TclRPCBench runs the Tcl RPC benchmark against a virtual board served on
// a JTAG port and an OpenOCD launched for it as hilrun launches one (its
// Tcl RPC server on a free port). Every value read is checked against the
// word the board holds, which changes every round.
func TclRPCBench(ctx context.Context, o TclOptions) (_ *TclReport, err error) {
	if o.Rounds < 1 || o.N < 1 || o.Warmup < 0 {
		return nil, fmt.Errorf("rounds and n must be at least 1, warmup at least 0")
	}
	board, err := launchTclBoard(ctx, o.OpenOCD)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, board.Close()) }()
	const addr = uint64(sim.RAMBase + 0x100)
	clients, err := dialTclClients(ctx, board.proc)
	if err != nil {
		return nil, err
	}
	defer clients.Close()
	sides := clients.sides(addr)
	rep := &TclReport{OpenOCD: clients.tcl.Version(), Rounds: o.Rounds, N: o.N, Warmup: o.Warmup}
	samples := make(map[string][]time.Duration)
	medians := make(map[string][]time.Duration)
	for round := range o.Rounds {
		want := uint64(rand.Uint32())
		if err := board.mem.Write(uint32(addr), 32, uint32(want)); err != nil {
			return nil, err
		}
		for _, side := range rotate(sides, round) {
			got, err := side.reads(ctx, o, round, want)
			if err != nil {
				return nil, err
			}
			samples[side.name] = append(samples[side.name], got...)
			medians[side.name] = append(medians[side.name], summarize(got).Median)
		}
		if o.Progress != nil {
			o.Progress(fmt.Sprintf("round %d/%d: tcl %v, telnet %v, raw %v", round+1, o.Rounds,
				medians[SideTclRPC][round], medians[SideTelnet][round], medians[SideRawTclRPC][round]))
		}
	}
	for _, side := range sides {
		rep.Sides = append(rep.Sides, TclSide{Side: side.name, Summary: summarize(samples[side.name]), RoundMedians: medians[side.name]})
	}
	rep.Ratio = MedianRatio(medians[SideTclRPC], medians[SideRawTclRPC])
	rep.TelnetRatio = MedianRatio(medians[SideTelnet], medians[SideRawTclRPC])
	rep.Speedup = MedianRatio(medians[SideTelnet], medians[SideTclRPC])
	return rep, nil
}

// tclBoard is the virtual board's memory served on a JTAG port, with the
// OpenOCD launched for it and the directory of its configuration.
type tclBoard struct {
	mem  *sim.Memory
	srv  *jtag.Server
	proc *openocd.Process
	dir  string
}

// launchTclBoard serves a fresh board memory on a JTAG port and launches
// bin against it with its Tcl RPC server on, as hilrun launches OpenOCD.
// On an error it undoes what it started.
func launchTclBoard(ctx context.Context, bin string) (_ *tclBoard, err error) {
	b := &tclBoard{mem: sim.NewMemory()}
	b.srv, err = jtag.Serve(ctx, b.mem, "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("serve the board's JTAG port: %w", err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, b.srv.Close())
		}
	}()
	b.dir, err = os.MkdirTemp("", "tclbench-")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(b.dir)
		}
	}()
	cfg := filepath.Join(b.dir, "board.cfg")
	if err := os.WriteFile(cfg, []byte(jtag.OpenOCDConfig(b.srv.Addr())), 0o644); err != nil {
		return nil, err
	}
	b.proc, err = openocd.Launch(ctx, openocd.LaunchConfig{
		Binary: bin, Configs: []string{cfg}, Dir: b.dir, Env: []string{"HOME=" + b.dir},
		Transport: openocd.TclRPC, Procs: Gates.Procs, Dial: Gates.Dial,
	})
	if err != nil {
		return nil, fmt.Errorf("launch openocd for the board: %w", err)
	}
	return b, nil
}

// Close stops OpenOCD, removes its directory and stops serving the JTAG
// port, in that order.
func (b *tclBoard) Close() error {
	err := b.proc.Stop()
	os.RemoveAll(b.dir)
	return errors.Join(err, b.srv.Close())
}

// tclClients are the three clients of the benchmark on one OpenOCD:
// hilrun's session over Tcl RPC and over telnet, and the bare Tcl RPC
// client.
type tclClients struct {
	tcl, telnet *openocd.Session
	raw         *rawTcl
}

// dialTclClients connects the three clients to proc; on an error it closes
// those it connected.
func dialTclClients(ctx context.Context, proc *openocd.Process) (*tclClients, error) {
	tcl, err := openocd.Dial(ctx, openocd.JoinAddr(proc.TclAddr(), openocd.TclRPC), openocd.WithGate(Gates.Dial))
	if err != nil {
		return nil, err
	}
	telnet, err := openocd.Dial(ctx, proc.TelnetAddr(), openocd.WithGate(Gates.Dial))
	if err != nil {
		tcl.Close()
		return nil, err
	}
	raw, err := dialRawTcl(ctx, proc.TclAddr())
	if err != nil {
		telnet.Close()
		tcl.Close()
		return nil, err
	}
	return &tclClients{tcl: tcl, telnet: telnet, raw: raw}, nil
}

// Close closes the clients, the last connected first.
func (c *tclClients) Close() {
	c.raw.Close()
	c.telnet.Close()
	c.tcl.Close()
}

// tclSide is one side of the benchmark: a name and the read it times.
type tclSide struct {
	name string
	read tclReader
}

// sides returns the sides that read the word at addr, one per client, in
// the order of the report.
func (c *tclClients) sides(addr uint64) []tclSide {
	session := func(s *openocd.Session) tclReader {
		return func(ctx context.Context) (uint64, error) {
			v, err := s.ReadMemory(ctx, addr, 32, 1)
			if err != nil {
				return 0, err
			}
			return v[0], nil
		}
	}
	return []tclSide{
		{SideTclRPC, session(c.tcl)},
		{SideTelnet, session(c.telnet)},
		{SideRawTclRPC, func(ctx context.Context) (uint64, error) { return c.raw.read(ctx, addr) }},
	}
}

// reads makes the side's o.Warmup+o.N reads of round, each of which must
// return want, and returns how long each measured one took.
func (side tclSide) reads(ctx context.Context, o TclOptions, round int, want uint64) ([]time.Duration, error) {
	got := make([]time.Duration, 0, o.N)
	for i := range o.Warmup + o.N {
		t0 := time.Now()
		v, err := side.read(ctx)
		d := time.Since(t0)
		if err != nil {
			return nil, fmt.Errorf("%s: round %d, read %d: %w", side.name, round, i, err)
		}
		if v != want {
			return nil, fmt.Errorf("%s: round %d, read %d: got 0x%x, the board holds 0x%x", side.name, round, i, v, want)
		}
		if i >= o.Warmup {
			got = append(got, d)
		}
	}
	return got, nil
}

// rawTcl is a bare client of OpenOCD's Tcl RPC server: a command and 0x1a
// out, its result and 0x1a back, nothing else.
type rawTcl struct {
	c   net.Conn
	buf []byte
	got []byte
}

func dialRawTcl(ctx context.Context, addr string) (*rawTcl, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("raw tcl-rpc: %w", err)
	}
	return &rawTcl{c: c, buf: make([]byte, 4096)}, nil
}

func (r *rawTcl) Close() error { return r.c.Close() }

// read reads the 32-bit word at addr with read_memory.
func (r *rawTcl) read(ctx context.Context, addr uint64) (uint64, error) {
	if dl, ok := ctx.Deadline(); ok {
		r.c.SetDeadline(dl)
	}
	if _, err := fmt.Fprintf(r.c, "read_memory 0x%x 32 1\x1a", addr); err != nil {
		return 0, err
	}
	r.got = r.got[:0]
	for !bytes.HasSuffix(r.got, []byte{0x1a}) {
		n, err := r.c.Read(r.buf)
		r.got = append(r.got, r.buf[:n]...)
		if err != nil {
			return 0, err
		}
	}
	s := strings.TrimSpace(string(r.got[:len(r.got)-1]))
	v, err := strconv.ParseUint(s, 0, 32)
	if err != nil {
		return 0, fmt.Errorf("read_memory answered %q", s)
	}
	return v, nil
}
