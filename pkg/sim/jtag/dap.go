package jtag

import "github.com/hilrun/hilrun/pkg/sim"

// Identification values the simulated debug port reports.
const (
	// IDCODE is the JTAG IDCODE of the simulated JTAG-DP TAP, the value of
	// an ARM JTAG-DP (designer ARM, part 0xBA00, version 4).
	IDCODE uint32 = 0x4BA00477
	// APIDR is the IDR of the MEM-AP at AP index 0: an AHB-AP (designer ARM,
	// class MEM-AP, type AHB, revision 2).
	APIDR uint32 = 0x24770011
	// APBase is the MEM-AP's BASE register: format 1 with no debug entries,
	// since the board has no ROM table.
	APBase uint32 = 0x00000002
)

// IR instructions of the JTAG-DP; the instruction register is 4 bits long.
// Values not listed select BYPASS.
const (
	IRAbort  = 0x8
	IRDPACC  = 0xA
	IRAPACC  = 0xB
	IRIDCODE = 0xE
	IRBypass = 0xF
)

// irLen is the length of the instruction register in bits, and irCapture
// the value it captures: 0b01 in its low bits as IEEE 1149.1 requires.
const (
	irLen     = 4
	irCapture = 0b0001
)

// Lengths of the data registers in bits.
const (
	accLen    = 35 // DPACC, APACC and ABORT: 3 bits of ACK or RnW+A[3:2], 32 of data
	idcodeLen = 32
	bypassLen = 1
)

// JTAG-DP acknowledgements, captured in the low 3 bits of a DPACC or APACC
// scan. ADIv5 JTAG-DPs report faults through CTRL/STAT, so OK and FAULT
// share a code.
const (
	ackWait = 0b001
	ackOK   = 0b010
)

// DP register addresses (A[3:2] of a DPACC scan, as a byte offset).
const (
	dpCtrlStat = 0x4
	dpSelect   = 0x8
	dpRDBUFF   = 0xC
)

// CTRL/STAT bits.
const (
	ctrlORUNDETECT   = 1 << 0
	ctrlSTICKYORUN   = 1 << 1
	ctrlSTICKYCMP    = 1 << 4
	ctrlSTICKYERR    = 1 << 5
	ctrlREADOK       = 1 << 6
	ctrlCDBGRSTREQ   = 1 << 26
	ctrlCDBGRSTACK   = 1 << 27
	ctrlCDBGPWRUPREQ = 1 << 28
	ctrlCDBGPWRUPACK = 1 << 29
	ctrlCSYSPWRUPREQ = 1 << 30
	ctrlCSYSPWRUPACK = 1 << 31

	// ctrlWritable are the bits a write stores: ORUNDETECT, TRNMODE,
	// MASKLANE, TRNCNT and the request bits.
	ctrlWritable = ctrlORUNDETECT | 0x3<<2 | 0xF<<8 | 0xFFF<<12 |
		ctrlCDBGRSTREQ | ctrlCDBGPWRUPREQ | ctrlCSYSPWRUPREQ
	// ctrlSticky are the flags a write of 1 clears, as on a JTAG-DP.
	ctrlSticky = ctrlSTICKYORUN | ctrlSTICKYCMP | ctrlSTICKYERR
)

// SELECT fields.
const (
	selectAPSEL     = 0xFF000000
	selectAPBANKSEL = 0x000000F0
	selectDPBANKSEL = 0x0000000F
)

// ABORT bits. On a real JTAG-DP only DAPABORT is defined; the simulator also
// honours the SW-DP clear bits, which cost nothing and let tools written for
// either transport clear the flags.
const (
	abortDAPABORT   = 1 << 0
	abortSTKCMPCLR  = 1 << 1
	abortSTKERRCLR  = 1 << 2
	abortORUNERRCLR = 1 << 4
)

// MEM-AP register addresses: APBANKSEL<<4 | A[3:2]<<2.
const (
	apCSW  = 0x00
	apTAR  = 0x04
	apDRW  = 0x0C
	apBD0  = 0x10
	apBD3  = 0x1C
	apCFG  = 0xF4
	apBASE = 0xF8
	apIDR  = 0xFC
)

// CSW fields.
const (
	cswSize         = 0x7
	cswSize8        = 0
	cswSize16       = 1
	cswSize32       = 2
	cswAddrInc      = 0x3 << 4
	cswAddrIncOff   = 0 << 4
	cswAddrIncOne   = 1 << 4
	cswAddrIncPack  = 2 << 4
	cswDeviceEn     = 1 << 6
	cswTrInProg     = 1 << 7
	cswMode         = 0xF << 8
	cswProt         = 0x7F << 24
	cswDbgSwEnable  = 1 << 31
	cswWritable     = cswSize | cswAddrInc | cswMode | cswProt | cswDbgSwEnable
	cswReset        = cswSize32 | cswDeviceEn
	tarAutoIncBlock = 0x3FF // auto-increment covers TAR[9:0] only, as ADIv5 guarantees
)

// dap is the debug port behind the TAP: a JTAG-DP with one MEM-AP (AP 0)
// on the board's memory bus. Accesses complete at once, so WAIT is only
// returned when a test injects it.
//
// A dap is not safe for concurrent use; its counters are.
type dap struct {
	mem   *sim.Memory
	stats *counters

	ctrlStat uint32
	sel      uint32
	// readBuf is the result of the last read, captured by the next DPACC or
	// APACC scan: JTAG-DP reads are posted.
	readBuf uint32

	csw uint32
	tar uint32
}

func newDAP(mem *sim.Memory, stats *counters) *dap {
	return &dap{mem: mem, stats: stats, csw: cswReset}
}

// dpAccess performs a DPACC transaction: addr is A[3:2] as a byte offset.
func (d *dap) dpAccess(addr uint8, read bool, data uint32) {
	if read {
		d.stats.dpReads.Add(1)
		switch addr {
		case dpCtrlStat:
			d.readBuf = d.ctrlStat
		case dpSelect:
			d.readBuf = d.sel
		default:
			// RDBUFF is RAZ on a JTAG-DP: reading it only collects the
			// previous read in this scan's capture. 0x0 is reserved.
			d.readBuf = 0
		}
		return
	}
	d.stats.dpWrites.Add(1)
	switch addr {
	case dpCtrlStat:
		v := d.ctrlStat&^ctrlWritable | data&ctrlWritable
		v &^= data & ctrlSticky
		// The power and reset domains answer at once: each ACK mirrors
		// its REQ.
		v &^= ctrlCDBGRSTACK | ctrlCDBGPWRUPACK | ctrlCSYSPWRUPACK
		if v&ctrlCDBGRSTREQ != 0 {
			v |= ctrlCDBGRSTACK
		}
		if v&ctrlCDBGPWRUPREQ != 0 {
			v |= ctrlCDBGPWRUPACK
		}
		if v&ctrlCSYSPWRUPREQ != 0 {
			v |= ctrlCSYSPWRUPACK
		}
		d.ctrlStat = v
	case dpSelect:
		d.sel = data & (selectAPSEL | selectAPBANKSEL | selectDPBANKSEL)
	}
}

// abort handles a write to the ABORT register. DAPABORT ends any
// transaction in progress; none is ever in progress here, so the simulator
// uses it to return the DP to a clean state and clears the sticky flags.
func (d *dap) abort(data uint32) {
	d.stats.aborts.Add(1)
	if data&abortDAPABORT != 0 {
		d.ctrlStat &^= ctrlSticky
	}
	if data&abortSTKCMPCLR != 0 {
		d.ctrlStat &^= ctrlSTICKYCMP
	}
	if data&abortSTKERRCLR != 0 {
		d.ctrlStat &^= ctrlSTICKYERR
	}
	if data&abortORUNERRCLR != 0 {
		d.ctrlStat &^= ctrlSTICKYORUN
	}
}

// apAccess performs an APACC transaction: addr is A[3:2] as a byte offset;
// SELECT supplies the AP and the register bank.
func (d *dap) apAccess(addr uint8, read bool, data uint32) {
	if read {
		d.stats.apReads.Add(1)
	} else {
		d.stats.apWrites.Add(1)
	}
	// With a sticky flag set the DP discards AP transactions until the
	// debugger clears it, so one fault cannot be followed by accesses
	// that assume it succeeded.
	if d.ctrlStat&(ctrlSTICKYERR|ctrlSTICKYORUN) != 0 {
		if read {
			d.readBuf = 0
		}
		return
	}
	if d.ctrlStat&ctrlCDBGPWRUPACK == 0 {
		d.fault(read)
		return
	}
	if d.sel&selectAPSEL != 0 {
		// No AP at this index: reads as zero (an IDR of 0 tells a debugger
		// so), writes are ignored.
		if read {
			d.readBuf = 0
		}
		return
	}
	reg := d.sel&selectAPBANKSEL | uint32(addr)
	if read {
		v, ok := d.apRead(reg)
		if !ok {
			d.fault(true)
			return
		}
		d.readBuf = v
		d.ctrlStat |= ctrlREADOK
		return
	}
	if !d.apWrite(reg, data) {
		d.fault(false)
	}
}

// fault records a failed AP transaction the way a JTAG-DP does: STICKYERR
// set, READOK clear, the scan's ACK still OK/FAULT.
func (d *dap) fault(read bool) {
	d.ctrlStat |= ctrlSTICKYERR
	d.ctrlStat &^= ctrlREADOK
	if read {
		d.readBuf = 0
	}
}

func (d *dap) apRead(reg uint32) (uint32, bool) {
	switch {
	case reg == apCSW:
		return d.csw, true
	case reg == apTAR:
		return d.tar, true
	case reg == apDRW:
		return d.drw(true, 0)
	case reg >= apBD0 && reg <= apBD3:
		return d.banked(reg, true, 0)
	case reg == apCFG:
		return 0, true // little-endian, 32-bit addresses and data
	case reg == apBASE:
		return APBase, true
	case reg == apIDR:
		return APIDR, true
	}
	return 0, true // reserved: RAZ
}

func (d *dap) apWrite(reg, v uint32) bool {
	switch {
	case reg == apCSW:
		d.csw = d.csw&^cswWritable | v&cswWritable | cswDeviceEn
		return true
	case reg == apTAR:
		d.tar = v
		return true
	case reg == apDRW:
		_, ok := d.drw(false, v)
		return ok
	case reg >= apBD0 && reg <= apBD3:
		_, ok := d.banked(reg, false, v)
		return ok
	}
	return true // read-only or reserved: WI
}

// drw performs a DRW access at TAR with CSW's size and then advances TAR
// as CSW.AddrInc asks. A failed access leaves TAR at the faulting transfer,
// so a debugger reading TAR learns where it failed.
func (d *dap) drw(read bool, v uint32) (uint32, bool) {
	size, ok := d.size()
	if !ok {
		return 0, false
	}
	n := uint32(1) // transfers in this access
	if d.csw&cswAddrInc == cswAddrIncPack && size < 4 {
		n = 4 / size
	}
	var out uint32
	for i := range n {
		addr := d.tar + i*size
		got, ok := d.lanes(addr, size, read, v)
		if !ok {
			d.tar = addr
			return 0, false
		}
		out |= got
	}
	switch d.csw & cswAddrInc {
	case cswAddrIncOne:
		d.incTAR(size)
	case cswAddrIncPack:
		d.incTAR(size * n)
	}
	return out, true
}

// banked performs a BD0-BD3 access: the word at TAR[31:4] + n*4 with CSW's
// size, TAR unchanged.
func (d *dap) banked(reg uint32, read bool, v uint32) (uint32, bool) {
	size, ok := d.size()
	if !ok {
		return 0, false
	}
	addr := d.tar&^0xF | (reg - apBD0)
	return d.lanes(addr, size, read, v)
}

// lanes performs one bus transfer of size bytes at addr. The data sits in
// the byte lanes addr selects, as ADIv5 specifies for a 32-bit data bus:
// a byte at addr uses lane addr&3, a halfword lanes addr&2 and addr&2+1.
func (d *dap) lanes(addr, size uint32, read bool, v uint32) (uint32, bool) {
	if d.ctrlStat&ctrlCSYSPWRUPACK == 0 {
		return 0, false // the system bus is powered down
	}
	shift := 8 * (addr & 3)
	width := int(8 * size)
	if read {
		got, err := d.mem.Read(addr, width)
		if err != nil {
			// sim.ErrBusFault, or a width the memory rejects: either way
			// the bus answers with an error response.
			d.stats.busFaults.Add(1)
			return 0, false
		}
		d.stats.busReads.Add(1)
		return got << shift, true
	}
	if err := d.mem.Write(addr, width, v>>shift); err != nil {
		d.stats.busFaults.Add(1)
		return 0, false
	}
	d.stats.busWrites.Add(1)
	return 0, true
}

// size returns CSW.Size in bytes; sizes an AHB-AP lacks (64 bits and up)
// make DRW and BD accesses fail.
func (d *dap) size() (uint32, bool) {
	switch d.csw & cswSize {
	case cswSize8:
		return 1, true
	case cswSize16:
		return 2, true
	case cswSize32:
		return 4, true
	}
	return 0, false
}

func (d *dap) incTAR(by uint32) {
	d.tar = d.tar&^tarAutoIncBlock | (d.tar+by)&tarAutoIncBlock
}
