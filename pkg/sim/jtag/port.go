package jtag

import (
	"sync/atomic"

	"github.com/hilrun/hilrun/pkg/sim"
)

// port is the board's JTAG port: the pins, the TAP controller, the
// instruction register and the data registers the instruction selects, in
// front of the debug port.
//
// It works on pin levels, not on commands, so whatever drives the pins (the
// remote_bitbang server, a unit test) sees what a probe would: the TAP
// acts on the rising edge of TCK and TDO changes on the falling edge.
//
// A port is not safe for concurrent use; its counters are.
type port struct {
	dap   *dap
	stats *counters

	tck, trst, srst bool

	state tapState
	ir    uint8
	// shift is the register between TDI and TDO in Shift-IR or Shift-DR;
	// bit 0 is next out on TDO. shiftLen is its length in bits.
	shift    uint64
	shiftLen int
	// out is TDO as driven since the last falling edge.
	out bool
	// wait is set when this DR scan captured a WAIT acknowledgement: its
	// request is then ignored, as a JTAG-DP ignores a request it could not
	// accept.
	wait bool
	// waits is the number of WAIT acknowledgements still to inject.
	waits *atomic.Int64
}

func newPort(mem *sim.Memory, stats *counters, waits *atomic.Int64) *port {
	p := &port{dap: newDAP(mem, stats), stats: stats, waits: waits}
	p.tapReset()
	return p
}

// tapReset puts the TAP in Test-Logic-Reset, where IDCODE is the current
// instruction. The debug port behind it keeps its state, as on a JTAG-DP,
// whose registers only a power-on reset clears.
func (p *port) tapReset() {
	p.state = stateReset
	p.ir = IRIDCODE
	p.shift, p.shiftLen = 0, 0
	p.out = false
}

// setPins drives TCK, TMS and TDI. A rising TCK edge clocks the TAP with
// the new TMS and TDI; a falling edge updates TDO.
func (p *port) setPins(tck, tms, tdi bool) {
	rising := tck && !p.tck
	falling := !tck && p.tck
	p.tck = tck
	if p.trst {
		return // held in reset
	}
	if rising {
		p.clock(tms, tdi)
	}
	if falling {
		p.drive()
	}
}

// setReset drives the TRST and SRST lines; true means asserted. TRST holds
// the TAP in Test-Logic-Reset. Asserting SRST resets the board (see
// sim.Memory.Reset) but not the debug logic, as on a Cortex-M, so a
// debugger stays connected across a system reset.
func (p *port) setReset(trst, srst bool) {
	p.trst = trst
	if trst {
		p.tapReset()
	}
	if srst && !p.srst {
		p.stats.srsts.Add(1)
		p.dap.mem.Reset()
	}
	p.srst = srst
}

// tdo returns the level of TDO.
func (p *port) tdo() bool {
	return p.out
}

// clock is one rising TCK edge: the current state's action, then the
// transition.
func (p *port) clock(tms, tdi bool) {
	switch p.state {
	case stateCaptureDR:
		p.captureDR()
	case stateShiftDR, stateShiftIR:
		p.shift >>= 1
		if tdi {
			p.shift |= 1 << (p.shiftLen - 1)
		}
	case stateCaptureIR:
		p.shift, p.shiftLen = irCapture, irLen
	}
	p.state = p.state.next(tms)
	switch p.state {
	case stateReset:
		p.tapReset()
	case stateUpdateDR:
		p.updateDR()
	case stateUpdateIR:
		p.ir = uint8(p.shift) & (1<<irLen - 1)
		p.stats.irScans.Add(1)
	}
}

// drive sets TDO from the shift register in the Shift states; elsewhere
// TDO is inactive and reads low.
func (p *port) drive() {
	switch p.state {
	case stateShiftDR, stateShiftIR:
		p.out = p.shift&1 != 0
	default:
		p.out = false
	}
}

// captureDR loads the data register the current instruction selects.
func (p *port) captureDR() {
	p.wait = false
	switch p.ir {
	case IRDPACC, IRAPACC:
		ack := uint64(ackOK)
		if p.takeWait() {
			ack = ackWait
			p.wait = true
			p.stats.waits.Add(1)
			// With overrun detection on, a WAIT sets STICKYORUN and the
			// AP transactions the debugger pipelined behind the stalled
			// one are discarded until it clears the flag and replays
			// them: running them out of order would use a stale TAR.
			if p.dap.ctrlStat&ctrlORUNDETECT != 0 {
				p.dap.ctrlStat |= ctrlSTICKYORUN
			}
		}
		p.shift, p.shiftLen = uint64(p.dap.readBuf)<<3|ack, accLen
	case IRAbort:
		p.shift, p.shiftLen = 0, accLen
	case IRIDCODE:
		p.shift, p.shiftLen = uint64(IDCODE), idcodeLen
	default:
		p.shift, p.shiftLen = 0, bypassLen
	}
}

// takeWait consumes one injected WAIT, if any is pending.
func (p *port) takeWait() bool {
	for {
		n := p.waits.Load()
		if n <= 0 {
			return false
		}
		if p.waits.CompareAndSwap(n, n-1) {
			return true
		}
	}
}

// updateDR hands a completed DPACC, APACC or ABORT scan to the debug port.
// The 35 bits hold RnW in bit 0, A[3:2] in bits 2:1 and the data above.
func (p *port) updateDR() {
	p.stats.drScans.Add(1)
	if p.shiftLen != accLen {
		return
	}
	read := p.shift&1 != 0
	addr := uint8(p.shift>>1&3) << 2
	data := uint32(p.shift >> 3)
	switch p.ir {
	case IRDPACC:
		if !p.wait {
			p.dap.dpAccess(addr, read, data)
		}
	case IRAPACC:
		if !p.wait {
			p.dap.apAccess(addr, read, data)
		}
	case IRAbort:
		if !read && addr == 0 {
			p.dap.abort(data)
		}
	}
}
