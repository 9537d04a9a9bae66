package jtag

import (
	"sync/atomic"
	"testing"

	"github.com/hilrun/hilrun/pkg/sim"
)

// probe drives a port's pins the way OpenOCD's bitbang driver does: set
// TMS and TDI with TCK low, sample TDO, raise TCK. It keeps the TAP in
// Run-Test/Idle between operations.
type probe struct {
	t     *testing.T
	p     *port
	mem   *sim.Memory
	stats *counters
	waits *atomic.Int64
	ir    uint8
}

func newProbe(t *testing.T) *probe {
	t.Helper()
	var (
		stats counters
		waits atomic.Int64
	)
	mem := sim.NewMemory()
	pr := &probe{t: t, p: newPort(mem, &stats, &waits), mem: mem, stats: &stats, waits: &waits}
	pr.reset()
	return pr
}

// clock is one TCK cycle; it returns TDO as sampled before the rising edge.
func (pr *probe) clock(tms, tdi bool) bool {
	pr.p.setPins(false, tms, tdi)
	out := pr.p.tdo()
	pr.p.setPins(true, tms, tdi)
	return out
}

// tms clocks the TAP once for each TMS level given, with TDI low.
func (pr *probe) tms(levels ...int) {
	for _, l := range levels {
		pr.clock(l != 0, false)
	}
}

// reset moves the TAP to Test-Logic-Reset with TMS and then to Idle.
func (pr *probe) reset() {
	pr.tms(1, 1, 1, 1, 1, 0)
	pr.ir = IRIDCODE
}

// shift clocks n bits of v through the selected register, LSB first, with
// TMS high on the last bit, and returns what came out of TDO.
func (pr *probe) shift(v uint64, n int) uint64 {
	var out uint64
	for i := range n {
		if pr.clock(i == n-1, v>>i&1 != 0) {
			out |= 1 << i
		}
	}
	return out
}

// scanIR loads the instruction register from Idle and returns to Idle. It
// returns the captured IR value shifted out.
func (pr *probe) scanIR(ir uint8) uint8 {
	pr.tms(1, 1, 0, 0) // Select-DR, Select-IR, Capture-IR, Shift-IR
	out := pr.shift(uint64(ir), irLen)
	pr.tms(1, 0) // Update-IR, Idle
	pr.ir = ir
	return uint8(out)
}

// scanDR shifts n bits through the data register from Idle and returns to
// Idle.
func (pr *probe) scanDR(v uint64, n int) uint64 {
	pr.tms(1, 0, 0) // Select-DR, Capture-DR, Shift-DR
	out := pr.shift(v, n)
	pr.tms(1, 0) // Update-DR, Idle
	return out
}

// acc scans one DPACC or APACC request and returns the ACK and the data
// captured: the result of the previous read.
func (pr *probe) acc(ir uint8, read bool, addr uint8, data uint32) (ack uint8, prev uint32) {
	if pr.ir != ir {
		pr.scanIR(ir)
	}
	req := uint64(data)<<3 | uint64(addr>>2&3)<<1
	if read {
		req |= 1
	}
	out := pr.scanDR(req, accLen)
	return uint8(out & 7), uint32(out >> 3)
}

func (pr *probe) mustOK(ack uint8, what string) {
	pr.t.Helper()
	if ack != ackOK {
		pr.t.Fatalf("%s: ACK %03b, want OK (010)", what, ack)
	}
}

// read performs a posted read and collects it with RDBUFF.
func (pr *probe) read(ir uint8, addr uint8) uint32 {
	pr.t.Helper()
	ack, _ := pr.acc(ir, true, addr, 0)
	pr.mustOK(ack, "read request")
	ack, v := pr.acc(IRDPACC, true, dpRDBUFF, 0)
	pr.mustOK(ack, "RDBUFF")
	return v
}

func (pr *probe) write(ir uint8, addr uint8, v uint32) {
	pr.t.Helper()
	ack, _ := pr.acc(ir, false, addr, v)
	pr.mustOK(ack, "write")
}

func (pr *probe) dpRead(addr uint8) uint32     { pr.t.Helper(); return pr.read(IRDPACC, addr) }
func (pr *probe) dpWrite(addr uint8, v uint32) { pr.t.Helper(); pr.write(IRDPACC, addr, v) }

// apRead and apWrite reach AP 0 register reg (bank and offset) after
// selecting its bank.
func (pr *probe) apRead(reg uint32) uint32 {
	pr.t.Helper()
	pr.dpWrite(dpSelect, reg&selectAPBANKSEL)
	return pr.read(IRAPACC, uint8(reg&0xC))
}

func (pr *probe) apWrite(reg, v uint32) {
	pr.t.Helper()
	pr.dpWrite(dpSelect, reg&selectAPBANKSEL)
	pr.write(IRAPACC, uint8(reg&0xC), v)
}

// powerUp does the debug and system power-up handshake.
func (pr *probe) powerUp() {
	pr.t.Helper()
	pr.dpWrite(dpCtrlStat, ctrlCDBGPWRUPREQ|ctrlCSYSPWRUPREQ)
}

func (pr *probe) ctrlStat() uint32 {
	pr.t.Helper()
	return pr.dpRead(dpCtrlStat)
}

func TestIRScanCapturesAndLoads(t *testing.T) {
	pr := newProbe(t)
	if pr.p.ir != IRIDCODE {
		t.Fatalf("IR after reset = %#x, want IDCODE (%#x)", pr.p.ir, IRIDCODE)
	}
	if got := pr.scanIR(IRBypass); got != irCapture {
		t.Errorf("IR capture = %04b, want %04b", got, irCapture)
	}
	if pr.p.ir != IRBypass {
		t.Errorf("IR = %#x after loading BYPASS", pr.p.ir)
	}
	pr.reset()
	if pr.p.ir != IRIDCODE {
		t.Errorf("IR after Test-Logic-Reset = %#x, want IDCODE", pr.p.ir)
	}
}

func TestDRScans(t *testing.T) {
	tests := []struct {
		name string
		ir   uint8
		in   uint64
		n    int
		want uint64
	}{
		// The chain examination OpenOCD does after reset: IDCODE comes out
		// first, then the ones shifted in behind it.
		{"IDCODE after reset", IRIDCODE, 0xFFFFFFFF, 64, 0xFFFFFFFF<<32 | uint64(IDCODE)},
		{"BYPASS delays by one bit", IRBypass, 0b1011, 5, 0b10110},
		{"unknown instruction is BYPASS", 0x3, 0b1, 2, 0b10},
		{"ABORT captures zero", IRAbort, 0, accLen, 0},
		{"DPACC captures OK", IRDPACC, 0, accLen, ackOK},
		{"APACC captures OK", IRAPACC, 0, accLen, ackOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pr := newProbe(t)
			if tt.ir != IRIDCODE {
				pr.scanIR(tt.ir)
			}
			if got := pr.scanDR(tt.in, tt.n); got != tt.want {
				t.Errorf("scan out = %#x, want %#x", got, tt.want)
			}
		})
	}
}

// Pause-DR keeps the shift register: a scan split by a pause shifts the
// same bits as an unbroken one.
func TestDRScanThroughPause(t *testing.T) {
	pr := newProbe(t)
	pr.tms(1, 0, 0) // Shift-DR with IDCODE captured
	low := pr.shift(0, 16)
	pr.tms(0, 0, 1, 0) // Pause-DR, Pause-DR, Exit2-DR, Shift-DR
	high := pr.shift(0, 16)
	pr.tms(1, 0)
	if got := uint32(high<<16 | low); got != IDCODE {
		t.Errorf("IDCODE through Pause-DR = %#x, want %#x", got, IDCODE)
	}
}

func TestTRSTResetsTAP(t *testing.T) {
	pr := newProbe(t)
	pr.scanIR(IRBypass)
	pr.tms(1, 0, 0) // Shift-DR
	pr.p.setReset(true, false)
	if pr.p.state != stateReset || pr.p.ir != IRIDCODE {
		t.Fatalf("with TRST asserted: %v, IR %#x; want Test-Logic-Reset, IDCODE", pr.p.state, pr.p.ir)
	}
	pr.tms(0, 1, 0, 0) // held in reset: clocks do nothing
	if pr.p.state != stateReset {
		t.Errorf("TAP left reset while TRST asserted: %v", pr.p.state)
	}
	pr.p.setReset(false, false)
	pr.tms(0)
	if got := pr.scanDR(0, 32); got != uint64(IDCODE) {
		t.Errorf("IDCODE after TRST = %#x", got)
	}
}

func TestSRSTResetsBoard(t *testing.T) {
	pr := newProbe(t)
	if err := pr.mem.Write(sim.BlinkAddr, 32, 1); err != nil {
		t.Fatal(err)
	}
	pr.p.setReset(false, true)
	pr.p.setReset(false, true) // held: one reset only
	pr.p.setReset(false, false)
	if got, _ := pr.mem.Read(sim.BlinkAddr, 32); got != 0 {
		t.Errorf("blink flag after SRST = %d, want 0", got)
	}
	if n := pr.stats.srsts.Load(); n != 1 {
		t.Errorf("system resets = %d, want 1", n)
	}
}

func TestDPPowerUpHandshake(t *testing.T) {
	tests := []struct {
		name  string
		write uint32
		want  uint32
	}{
		{"nothing requested", 0, 0},
		{"debug power", ctrlCDBGPWRUPREQ, ctrlCDBGPWRUPREQ | ctrlCDBGPWRUPACK},
		{"system power", ctrlCSYSPWRUPREQ, ctrlCSYSPWRUPREQ | ctrlCSYSPWRUPACK},
		{"both", ctrlCDBGPWRUPREQ | ctrlCSYSPWRUPREQ,
			ctrlCDBGPWRUPREQ | ctrlCDBGPWRUPACK | ctrlCSYSPWRUPREQ | ctrlCSYSPWRUPACK},
		{"debug reset", ctrlCDBGRSTREQ, ctrlCDBGRSTREQ | ctrlCDBGRSTACK},
		{"ACK bits are read-only", ctrlCDBGPWRUPACK | ctrlCSYSPWRUPACK, 0},
		{"overrun detection", ctrlORUNDETECT | ctrlCDBGPWRUPREQ,
			ctrlORUNDETECT | ctrlCDBGPWRUPREQ | ctrlCDBGPWRUPACK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pr := newProbe(t)
			pr.dpWrite(dpCtrlStat, tt.write)
			if got := pr.ctrlStat(); got != tt.want {
				t.Errorf("CTRL/STAT = %#08x, want %#08x", got, tt.want)
			}
		})
	}
	t.Run("powering down drops the ACKs", func(t *testing.T) {
		pr := newProbe(t)
		pr.powerUp()
		pr.dpWrite(dpCtrlStat, 0)
		if got := pr.ctrlStat(); got != 0 {
			t.Errorf("CTRL/STAT = %#08x, want 0", got)
		}
	})
}

func TestPostedReads(t *testing.T) {
	pr := newProbe(t)
	pr.powerUp()
	pr.dpWrite(dpSelect, 0xF0) // AP 0, bank 0xF

	// The read of IDR returns, in its own scan, the previous result; the
	// value arrives with the next scan, whatever that scan is.
	ack, _ := pr.acc(IRAPACC, true, apIDR&0xC, 0)
	pr.mustOK(ack, "IDR read")
	ack, got := pr.acc(IRDPACC, true, dpSelect, 0)
	pr.mustOK(ack, "SELECT read")
	if got != APIDR {
		t.Errorf("scan after the IDR read captured %#08x, want IDR %#08x", got, APIDR)
	}
	// That SELECT read is itself posted.
	ack, got = pr.acc(IRDPACC, true, dpRDBUFF, 0)
	pr.mustOK(ack, "RDBUFF read")
	if got != 0xF0 {
		t.Errorf("RDBUFF captured %#08x, want SELECT 0xf0", got)
	}
	// RDBUFF itself reads as zero on a JTAG-DP.
	if _, got = pr.acc(IRDPACC, true, dpRDBUFF, 0); got != 0 {
		t.Errorf("RDBUFF after RDBUFF = %#08x, want 0", got)
	}
	// A write does not disturb the posted result.
	pr.acc(IRAPACC, true, apIDR&0xC, 0)
	pr.acc(IRDPACC, false, dpSelect, 0xF0)
	if _, got = pr.acc(IRDPACC, true, dpRDBUFF, 0); got != APIDR {
		t.Errorf("after read, write: captured %#08x, want IDR", got)
	}
	if r, w := pr.stats.apReads.Load(), pr.stats.dpWrites.Load(); r != 2 || w != 3 {
		t.Errorf("AP reads %d, DP writes %d; want 2, 3", r, w)
	}
}

func TestAPIdentification(t *testing.T) {
	tests := []struct {
		name string
		sel  uint32 // APSEL
		reg  uint32
		want uint32
	}{
		{"IDR", 0, apIDR, APIDR},
		{"BASE", 0, apBASE, APBase},
		{"CFG", 0, apCFG, 0},
		{"CSW at reset", 0, apCSW, cswSize32 | cswDeviceEn},
		{"reserved register", 0, 0x30, 0},
		{"no AP 1", 1 << 24, apIDR, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pr := newProbe(t)
			pr.powerUp()
			pr.dpWrite(dpSelect, tt.sel|tt.reg&selectAPBANKSEL)
			if got := pr.read(IRAPACC, uint8(tt.reg&0xC)); got != tt.want {
				t.Errorf("read = %#08x, want %#08x", got, tt.want)
			}
		})
	}
}

func TestCSW(t *testing.T) {
	tests := []struct {
		name  string
		write uint32
		want  uint32
	}{
		{"8-bit, increment", cswSize8 | cswAddrIncOne, cswSize8 | cswAddrIncOne | cswDeviceEn},
		{"16-bit, no increment", cswSize16, cswSize16 | cswDeviceEn},
		{"packed", cswSize8 | cswAddrIncPack, cswSize8 | cswAddrIncPack | cswDeviceEn},
		{"DeviceEn stays set", 0, cswDeviceEn},
		{"read-only bits ignored", cswTrInProg | 1<<23, cswDeviceEn},
		{"OpenOCD's AHB default", cswSize32 | cswAddrIncOne | 1<<25 | 1<<29 | cswDbgSwEnable,
			cswSize32 | cswAddrIncOne | 1<<25 | 1<<29 | cswDbgSwEnable | cswDeviceEn},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pr := newProbe(t)
			pr.powerUp()
			pr.apWrite(apCSW, tt.write)
			if got := pr.apRead(apCSW); got != tt.want {
				t.Errorf("CSW = %#08x, want %#08x", got, tt.want)
			}
		})
	}
}

func TestDRWAutoIncrement(t *testing.T) {
	const base = sim.RAMBase + 0x100
	tests := []struct {
		name    string
		csw     uint32
		tar     uint32
		n       int
		wantTAR uint32
	}{
		{"32-bit single", cswSize32 | cswAddrIncOne, base, 3, base + 12},
		{"32-bit off", cswSize32 | cswAddrIncOff, base, 3, base},
		{"16-bit single", cswSize16 | cswAddrIncOne, base, 3, base + 6},
		{"8-bit single", cswSize8 | cswAddrIncOne, base, 3, base + 3},
		{"8-bit packed", cswSize8 | cswAddrIncPack, base, 2, base + 8},
		{"16-bit packed", cswSize16 | cswAddrIncPack, base, 2, base + 8},
		// ADIv5 only promises to increment TAR[9:0].
		{"wraps in a 1 KiB block", cswSize32 | cswAddrIncOne, sim.RAMBase + 0x3F8, 3, sim.RAMBase + 0x004},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pr := newProbe(t)
			pr.powerUp()
			pr.apWrite(apCSW, tt.csw)
			pr.apWrite(apTAR, tt.tar)
			for range tt.n {
				pr.apRead(apDRW)
			}
			if got := pr.apRead(apTAR); got != tt.wantTAR {
				t.Errorf("TAR = %#08x, want %#08x", got, tt.wantTAR)
			}
		})
	}
}

func TestDRWWritesMemory(t *testing.T) {
	pr := newProbe(t)
	pr.powerUp()
	pr.apWrite(apCSW, cswSize32|cswAddrIncOne)
	pr.apWrite(apTAR, sim.RAMBase+0x200)
	words := []uint32{0x11111111, 0x22222222, 0x33333333}
	for _, w := range words {
		pr.apWrite(apDRW, w)
	}
	for i, w := range words {
		addr := sim.RAMBase + 0x200 + uint32(4*i)
		if got, err := pr.mem.Read(addr, 32); err != nil || got != w {
			t.Errorf("memory at %#x = %#x, %v; want %#x", addr, got, err, w)
		}
	}
	// Read them back through DRW from the start.
	pr.apWrite(apTAR, sim.RAMBase+0x200)
	for i, w := range words {
		if got := pr.apRead(apDRW); got != w {
			t.Errorf("DRW read %d = %#x, want %#x", i, got, w)
		}
	}
	if n := pr.stats.busWrites.Load(); n != 3 {
		t.Errorf("bus writes = %d, want 3", n)
	}
}

func TestBankedData(t *testing.T) {
	pr := newProbe(t)
	pr.powerUp()
	const base = sim.RAMBase + 0x40
	for i := range uint32(4) {
		if err := pr.mem.Write(base+4*i, 32, 0xA0+i); err != nil {
			t.Fatal(err)
		}
	}
	pr.apWrite(apCSW, cswSize32|cswAddrIncOne)
	pr.apWrite(apTAR, base+0x8) // BD registers ignore TAR[3:0]
	for i := range uint32(4) {
		if got := pr.apRead(apBD0 + 4*i); got != 0xA0+i {
			t.Errorf("BD%d = %#x, want %#x", i, got, 0xA0+i)
		}
	}
	pr.apWrite(apBD0+8, 0x5555) // BD2
	if got, _ := pr.mem.Read(base+8, 32); got != 0x5555 {
		t.Errorf("memory after BD2 write = %#x, want 0x5555", got)
	}
	if got := pr.apRead(apTAR); got != base+0x8 {
		t.Errorf("TAR after BD accesses = %#08x, want %#08x (unchanged)", got, base+0x8)
	}
}

func TestByteLanes(t *testing.T) {
	const word = sim.RAMBase + 0x300
	tests := []struct {
		name    string
		size    uint32
		addr    uint32
		drw     uint32 // value written to DRW
		want    uint32 // resulting word in memory
		readDRW uint32 // DRW when read back
	}{
		{"byte lane 0", cswSize8, word, 0x000000AB, 0x000000AB, 0x000000AB},
		{"byte lane 1", cswSize8, word + 1, 0x0000AB00, 0x0000AB00, 0x0000AB00},
		{"byte lane 2", cswSize8, word + 2, 0x00AB0000, 0x00AB0000, 0x00AB0000},
		{"byte lane 3", cswSize8, word + 3, 0xAB000000, 0xAB000000, 0xAB000000},
		// Data outside the addressed lanes is not written.
		{"byte lane 1 ignores other lanes", cswSize8, word + 1, 0xFFFF12FF, 0x00001200, 0x00001200},
		{"halfword lanes 0-1", cswSize16, word, 0x0000BEEF, 0x0000BEEF, 0x0000BEEF},
		{"halfword lanes 2-3", cswSize16, word + 2, 0xBEEF0000, 0xBEEF0000, 0xBEEF0000},
		{"halfword lanes 2-3 ignores 0-1", cswSize16, word + 2, 0xBEEF1234, 0xBEEF0000, 0xBEEF0000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pr := newProbe(t)
			pr.powerUp()
			pr.apWrite(apCSW, tt.size|cswAddrIncOff)
			pr.apWrite(apTAR, tt.addr)
			pr.apWrite(apDRW, tt.drw)
			if got, _ := pr.mem.Read(word, 32); got != tt.want {
				t.Errorf("memory word = %#08x, want %#08x", got, tt.want)
			}
			if got := pr.apRead(apDRW); got != tt.readDRW {
				t.Errorf("DRW read = %#08x, want %#08x", got, tt.readDRW)
			}
			w := pr.mem.Writes()
			if len(w) != 1 || w[0].Width != int(8<<tt.size) || w[0].Addr != tt.addr {
				t.Errorf("bus writes = %+v, want one %d-bit write at %#x", w, 8<<tt.size, tt.addr)
			}
		})
	}
}

// Packed transfers move several bytes or halfwords per DRW access, each in
// the lane its address selects, even from an unaligned start.
func TestPackedTransfers(t *testing.T) {
	pr := newProbe(t)
	pr.powerUp()
	const base = sim.RAMBase + 0x400
	if err := pr.mem.WriteBlock(base, []byte{0, 1, 2, 3, 4, 5, 6, 7}); err != nil {
		t.Fatal(err)
	}
	pr.apWrite(apCSW, cswSize8|cswAddrIncPack)
	pr.apWrite(apTAR, base+1)
	if got := pr.apRead(apDRW); got != 0x03020104 {
		// Bytes at base+1..base+4 sit in lanes 1, 2, 3, 0.
		t.Errorf("packed bytes from base+1 = %#08x, want 0x03020104", got)
	}
	pr.apWrite(apCSW, cswSize16|cswAddrIncPack)
	pr.apWrite(apTAR, base)
	pr.apWrite(apDRW, 0xAAAABBBB)
	got := make([]byte, 4)
	pr.mem.ReadBlock(base, got)
	if string(got) != "\xbb\xbb\xaa\xaa" {
		t.Errorf("memory after packed halfword write = % x, want bb bb aa aa", got)
	}
	if n := len(pr.mem.Writes()); n != 2 {
		t.Errorf("bus writes = %d, want 2 halfword writes", n)
	}
}

func TestBusFaultSetsStickyErr(t *testing.T) {
	tests := []struct {
		name   string
		size   uint32
		tar    uint32
		write  bool
		banked bool
	}{
		{"read unmapped", cswSize32, 0x30000000, false, false},
		{"write unmapped", cswSize32, 0x30000000, true, false},
		{"misaligned word", cswSize32, sim.RAMBase + 2, false, false},
		{"misaligned halfword write", cswSize16, sim.RAMBase + 1, true, false},
		{"past the end of RAM", cswSize32, sim.RAMBase + sim.RAMSize, false, false},
		{"banked read unmapped", cswSize32, 0x30000000, false, true},
		{"unsupported 64-bit size", 3, sim.RAMBase, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pr := newProbe(t)
			pr.powerUp()
			pr.apWrite(apCSW, tt.size|cswAddrIncOne)
			pr.apWrite(apTAR, tt.tar)
			reg := uint32(apDRW)
			if tt.banked {
				reg = apBD0
			}
			if tt.write {
				pr.apWrite(reg, 1)
			} else {
				pr.apRead(reg)
			}
			cs := pr.ctrlStat()
			if cs&ctrlSTICKYERR == 0 {
				t.Fatalf("CTRL/STAT = %#08x, want STICKYERR set", cs)
			}
			if cs&ctrlREADOK != 0 {
				t.Errorf("CTRL/STAT = %#08x, want READOK clear", cs)
			}
			// With STICKYERR set, AP accesses are discarded: TAR still
			// names the faulting address.
			pr.apWrite(apTAR, sim.RAMBase)
			pr.dpWrite(dpCtrlStat, ctrlCDBGPWRUPREQ|ctrlCSYSPWRUPREQ|ctrlSTICKYERR)
			if cs := pr.ctrlStat(); cs&ctrlSTICKYERR != 0 {
				t.Fatalf("CTRL/STAT = %#08x after writing STICKYERR, want it cleared", cs)
			}
			if got := pr.apRead(apTAR); got != tt.tar {
				t.Errorf("TAR = %#08x, want the faulting %#08x", got, tt.tar)
			}
		})
	}
}

func TestBusFaultThenGoodRead(t *testing.T) {
	pr := newProbe(t)
	pr.powerUp()
	pr.apWrite(apCSW, cswSize32)
	pr.apWrite(apTAR, 0x30000000)
	pr.apRead(apDRW)
	if n := pr.stats.busFaults.Load(); n != 1 {
		t.Fatalf("bus faults = %d, want 1", n)
	}
	pr.dpWrite(dpCtrlStat, ctrlCDBGPWRUPREQ|ctrlCSYSPWRUPREQ|ctrlSTICKYERR)
	pr.mem.Write(sim.GPIOODR, 32, 0x20)
	pr.apWrite(apTAR, sim.GPIOODR)
	if got := pr.apRead(apDRW); got != 0x20 {
		t.Errorf("ODR after a fault = %#x, want 0x20", got)
	}
	if cs := pr.ctrlStat(); cs&ctrlSTICKYERR != 0 || cs&ctrlREADOK == 0 {
		t.Errorf("CTRL/STAT = %#08x, want STICKYERR clear and READOK set", cs)
	}
}

func TestAbortClearsStickyFlags(t *testing.T) {
	tests := []struct {
		name  string
		abort uint32
		flags uint32 // set before the abort
		want  uint32 // left after it
	}{
		{"DAPABORT clears all", abortDAPABORT, ctrlSTICKYERR | ctrlSTICKYORUN | ctrlSTICKYCMP, 0},
		{"STKERRCLR", abortSTKERRCLR, ctrlSTICKYERR | ctrlSTICKYORUN, ctrlSTICKYORUN},
		{"ORUNERRCLR", abortORUNERRCLR, ctrlSTICKYERR | ctrlSTICKYORUN, ctrlSTICKYERR},
		{"STKCMPCLR", abortSTKCMPCLR, ctrlSTICKYCMP | ctrlSTICKYERR, ctrlSTICKYERR},
		{"zero does nothing", 0, ctrlSTICKYERR, ctrlSTICKYERR},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pr := newProbe(t)
			pr.powerUp()
			pr.p.dap.ctrlStat |= tt.flags
			pr.acc(IRAbort, false, 0, tt.abort)
			if got := pr.ctrlStat() & ctrlSticky; got != tt.want {
				t.Errorf("sticky flags = %#x, want %#x", got, tt.want)
			}
		})
	}
}

func TestAPNeedsPower(t *testing.T) {
	tests := []struct {
		name    string
		power   uint32
		reg     uint32
		wantErr bool
	}{
		{"register without debug power", 0, apIDR, true},
		{"register with debug power", ctrlCDBGPWRUPREQ, apIDR, false},
		{"memory without system power", ctrlCDBGPWRUPREQ, apDRW, true},
		{"memory with both", ctrlCDBGPWRUPREQ | ctrlCSYSPWRUPREQ, apDRW, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pr := newProbe(t)
			pr.dpWrite(dpCtrlStat, tt.power)
			pr.apWrite(apTAR, sim.RAMBase)
			pr.dpWrite(dpCtrlStat, tt.power|ctrlSTICKYERR) // start clean
			pr.apRead(tt.reg)
			if got := pr.ctrlStat()&ctrlSTICKYERR != 0; got != tt.wantErr {
				t.Errorf("STICKYERR = %v, want %v", got, tt.wantErr)
			}
		})
	}
}

func TestInjectedWait(t *testing.T) {
	pr := newProbe(t)
	pr.powerUp()
	pr.apWrite(apTAR, sim.RAMBase+0x10)
	pr.waits.Store(1)
	// The WAITed write is ignored...
	ack, _ := pr.acc(IRAPACC, false, apTAR, sim.RAMBase+0x20)
	if ack != ackWait {
		t.Fatalf("ACK = %03b, want WAIT (001)", ack)
	}
	// ... and the retry goes through.
	if got := pr.apRead(apTAR); got != sim.RAMBase+0x10 {
		t.Errorf("TAR = %#08x after a WAITed write, want it unchanged", got)
	}
	pr.write(IRAPACC, apTAR, sim.RAMBase+0x20)
	if got := pr.apRead(apTAR); got != sim.RAMBase+0x20 {
		t.Errorf("TAR = %#08x after the retry, want %#08x", got, sim.RAMBase+0x20)
	}
	if n := pr.stats.waits.Load(); n != 1 {
		t.Errorf("waits = %d, want 1", n)
	}

	// A WAITed scan still leaves the previous read's result for the next.
	pr.acc(IRAPACC, true, apTAR, 0)
	pr.waits.Store(1)
	if ack, _ := pr.acc(IRDPACC, true, dpRDBUFF, 0); ack != ackWait {
		t.Fatalf("ACK = %03b, want WAIT", ack)
	}
	if ack, got := pr.acc(IRDPACC, true, dpRDBUFF, 0); ack != ackOK || got != sim.RAMBase+0x20 {
		t.Errorf("after WAIT: ACK %03b, data %#08x; want OK, TAR", ack, got)
	}
}

// With overrun detection on, a WAIT sets STICKYORUN and AP transactions
// queued behind the stalled one are dropped until the flag is cleared.
func TestWaitWithOverrunDetection(t *testing.T) {
	pr := newProbe(t)
	pr.dpWrite(dpCtrlStat, ctrlCDBGPWRUPREQ|ctrlCSYSPWRUPREQ|ctrlORUNDETECT)
	pr.dpWrite(dpSelect, 0)
	pr.write(IRAPACC, apTAR, 0x30000000)
	pr.waits.Store(1)
	if ack, _ := pr.acc(IRAPACC, false, apTAR, sim.RAMBase); ack != ackWait {
		t.Fatalf("ACK = %03b, want WAIT", ack)
	}
	// The pipelined DRW read is discarded, not run at the stale TAR.
	if ack, _ := pr.acc(IRAPACC, true, apDRW, 0); ack != ackOK {
		t.Fatalf("ACK = %03b after the WAIT, want OK", ack)
	}
	if n := pr.stats.busReads.Load() + pr.stats.busFaults.Load(); n != 0 {
		t.Errorf("%d bus accesses while STICKYORUN was set", n)
	}
	cs := pr.ctrlStat()
	if cs&ctrlSTICKYORUN == 0 || cs&ctrlSTICKYERR != 0 {
		t.Fatalf("CTRL/STAT = %#08x, want STICKYORUN and no STICKYERR", cs)
	}
	// Clearing the flag and replaying works.
	pr.dpWrite(dpCtrlStat, ctrlCDBGPWRUPREQ|ctrlCSYSPWRUPREQ|ctrlORUNDETECT|ctrlSTICKYORUN)
	pr.write(IRAPACC, apTAR, sim.GPIOODR)
	pr.mem.Write(sim.GPIOODR, 32, 0x20)
	if got := pr.read(IRAPACC, apDRW); got != 0x20 {
		t.Errorf("replayed read = %#x, want 0x20", got)
	}
}
