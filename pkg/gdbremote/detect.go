package gdbremote

import "bytes"

// LooksLikeRSP reports whether first, the first bytes a server sent, are
// the GDB remote serial protocol: acknowledgements ('+', '-') and packets
// ($DATA#CC with a correct checksum, or the start of one). A GDB stub
// sends nothing until asked, except QEMU's, which sends a stop reply
// ("$T02thread:01;#04") when a connection stops a running guest; an
// OpenOCD telnet client that meets one can say "this is a GDB stub".
func LooksLikeRSP(first []byte) bool {
	if len(first) == 0 {
		return false
	}
	var d decoder
	d.feed(first)
	if d.nNoise > 0 {
		return false
	}
	for _, e := range d.pending {
		if e.err != nil {
			return false
		}
	}
	// An unfinished packet counts when what came of it is printable.
	if d.state != stIdle {
		for _, c := range d.raw {
			if c < 0x20 || c > 0x7e {
				return false
			}
		}
	}
	return true
}

// LooksLikeOpenOCDTelnet reports whether first, the first bytes a server
// sent, are OpenOCD's telnet banner: telnet option negotiation (IAC bytes)
// and "Open On-Chip Debugger".
func LooksLikeOpenOCDTelnet(first []byte) bool {
	return bytes.Contains(first, []byte("Open On-Chip Debugger"))
}
