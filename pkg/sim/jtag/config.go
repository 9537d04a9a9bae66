package jtag

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// Names the configuration gives the board's JTAG parts in OpenOCD.
const (
	// TapName is the TAP's dotted name: chip "sim", TAP "cpu".
	TapName = "sim.cpu"
	// DAPName is the name of the DAP object; its commands (sim.dap info,
	// sim.dap apreg ...) reach the debug port directly.
	DAPName = "sim.dap"
	// TargetName is the name of the mem_ap target that memory commands
	// (mdw, mww, load_image ...) act on.
	TargetName = "sim.mem"
)

// OpenOCDConfig returns an OpenOCD 0.12 configuration script that connects
// to the Server at bitbangAddr (host:port, as Server.Addr returns) and
// declares the board: one TAP with a 4-bit IR and the JTAG-DP's IDCODE, a
// DAP, and a mem_ap target on AP 0. OpenOCD's reset asserts SRST, which
// resets the board's memory map (and ends a hang).
//
// It disables the GDB and Tcl servers and leaves the telnet port to the
// caller, who must choose one so that parallel OpenOCDs do not collide:
//
//	openocd -f board.cfg -c "telnet_port 4444"
//
// A later -c "gdb_port ..." or -c "tcl_port ..." overrides the defaults
// here. If bitbangAddr is not host:port with a numeric port, the script
// makes OpenOCD stop with an error naming it.
func OpenOCDConfig(bitbangAddr string) string {
	var b strings.Builder
	b.WriteString("# hilrun virtual board: a JTAG-DP with a MEM-AP on the board's memory bus,\n")
	b.WriteString("# reached over remote_bitbang.\n")
	host, port, err := net.SplitHostPort(bitbangAddr)
	if err == nil {
		var n uint64
		n, err = strconv.ParseUint(port, 10, 16)
		if err == nil && n == 0 {
			err = fmt.Errorf("port 0")
		}
	}
	if err != nil {
		msg := fmt.Sprintf("hilrun: remote_bitbang address %q: want host:port with a port from 1 to 65535", bitbangAddr)
		fmt.Fprintf(&b, "error %s\n", tclQuote(msg))
		return b.String()
	}
	if host == "" {
		host = "localhost"
	}
	fmt.Fprintf(&b, `adapter driver remote_bitbang
remote_bitbang host %s
remote_bitbang port %s
transport select jtag
# remote_bitbang ignores the clock speed; OpenOCD wants one set.
adapter speed 10000
# reset drives the adapter's SRST line, which resets the board as its own
# reset does; the JTAG clock keeps running through it.
reset_config srst_only srst_nogate

jtag newtap sim cpu -irlen 4 -expected-id 0x%08x
dap create %s -chain-position %s
target create %s mem_ap -dap %s -ap-num 0
# The simulated bus answers at once: OpenOCD need not clock the TAP idle
# after each AP access (255 cycles by default). memaccess only works after
# init, hence the event.
%s configure -event examine-end {%s memaccess 0}

gdb_port disabled
tcl_port disabled
`, tclQuote(host), port, IDCODE, DAPName, TapName, TargetName, DAPName, TargetName, DAPName)
	return b.String()
}

// tclQuote returns s as one Tcl word.
func tclQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n\r;{}[]$\"\\#") {
		return s
	}
	r := strings.NewReplacer(`\`, `\\`, `{`, `\{`, `}`, `\}`, `[`, `\[`, `]`, `\]`, `$`, `\$`, `"`, `\"`, "\n", `\n`, ";", `\;`)
	return `"` + r.Replace(s) + `"`
}
