// Telnet (RFC 854) on a network port: decoding the stream, and answering
// the server's option negotiation and subnegotiations.

package serialx

// telnetCounters count what the server sent, for tests and messages.
type telnetCounters struct{ commands, refused int }

// telnetOpt is the state of one telnet option on each side: us is whether
// we perform it (we said WILL, they DO), him whether the server does; the
// asked flags mark a request of ours not yet answered.
type telnetOpt struct {
	us, him           bool
	askedUs, askedHim bool
}

// Telnet bytes (RFC 854) and options.
const (
	tnSE   = 240
	tnSB   = 250
	tnWILL = 251
	tnWONT = 252
	tnDO   = 253
	tnDONT = 254
	tnIAC  = 255

	optBinary  = 0
	optSGA     = 3
	optComPort = 44
)

// telnetParser decodes the bytes of a telnet connection; its state spans
// reads, as a command may be split between two.
type telnetParser struct {
	state int
	verb  byte
	sb    []byte
	sbBig bool
}

const (
	tpData = iota
	tpIAC
	tpVerb
	tpSB
	tpSBIAC
)

// sbMax bounds a subnegotiation; a longer one is dropped.
const sbMax = 512

// feed decodes in and returns its data bytes, reusing in's storage. It
// answers negotiation and handles subnegotiations on p.
func (tp *telnetParser) feed(p *netPort, in []byte) []byte {
	out := in[:0]
	for _, c := range in {
		switch tp.state {
		case tpData:
			if c == tnIAC {
				tp.state = tpIAC
				continue
			}
			p.tmu.Lock()
			binary, cr := p.opts[optBinary].him, p.crPend
			p.crPend = c == '\r'
			p.tmu.Unlock()
			if c == 0 && cr && !binary {
				continue // CR NUL is a bare CR outside BINARY
			}
			out = append(out, c)
		case tpIAC:
			switch c {
			case tnIAC:
				out = append(out, tnIAC)
				tp.state = tpData
			case tnWILL, tnWONT, tnDO, tnDONT:
				tp.verb, tp.state = c, tpVerb
			case tnSB:
				tp.sb, tp.sbBig, tp.state = tp.sb[:0], false, tpSB
			default: // NOP, GA, DM, AYT and the like carry nothing for us
				tp.state = tpData
			}
		case tpVerb:
			p.negotiation(tp.verb, c)
			tp.state = tpData
		case tpSB:
			if c == tnIAC {
				tp.state = tpSBIAC
				continue
			}
			tp.sbByte(c)
		case tpSBIAC:
			switch c {
			case tnIAC:
				tp.sbByte(tnIAC)
				tp.state = tpSB
			case tnSE:
				if !tp.sbBig {
					p.subnegotiation(tp.sb)
				}
				tp.state = tpData
			default: // a malformed subnegotiation: drop it
				tp.state = tpData
			}
		}
	}
	return out
}

func (tp *telnetParser) sbByte(c byte) {
	if len(tp.sb) >= sbMax {
		tp.sbBig = true
		return
	}
	tp.sb = append(tp.sb, c)
}

// negotiation answers the server's WILL, WONT, DO or DONT for opt. Only
// BINARY and SGA are accepted both ways, and COM-PORT-OPTION for us to
// perform; anything else is refused. A request that changes nothing gets
// no answer (RFC 854), so negotiation cannot loop.
func (p *netPort) negotiation(verb, opt byte) {
	p.tmu.Lock()
	o := &p.opts[opt]
	var reply []byte
	p.received.commands++
	switch verb {
	case tnWILL:
		switch {
		case opt != optBinary && opt != optSGA:
			reply = []byte{tnIAC, tnDONT, opt}
			p.received.refused++
		case !o.him && !o.askedHim:
			reply = []byte{tnIAC, tnDO, opt}
			o.him = true
		default:
			o.him = true
		}
		o.askedHim = false
	case tnWONT:
		if o.him && !o.askedHim {
			reply = []byte{tnIAC, tnDONT, opt}
		}
		o.him, o.askedHim = false, false
	case tnDO:
		switch {
		case opt != optBinary && opt != optSGA && opt != optComPort:
			reply = []byte{tnIAC, tnWONT, opt}
			p.received.refused++
		case !o.us && !o.askedUs:
			reply = []byte{tnIAC, tnWILL, opt}
			o.us = true
		default:
			o.us = true
		}
		o.askedUs = false
	case tnDONT:
		if o.us && !o.askedUs {
			reply = []byte{tnIAC, tnWONT, opt}
		}
		o.us, o.askedUs = false, false
	}
	p.checkSettledLocked()
	p.tmu.Unlock()
	if reply != nil {
		go p.writeRaw(reply) // not from the reader: a full socket must not stop it
	}
}

func (p *netPort) checkSettledLocked() {
	select {
	case <-p.settled:
		return
	default:
	}
	for _, o := range p.opts {
		if o.askedUs || o.askedHim {
			return
		}
	}
	close(p.settled)
}

// subnegotiation handles IAC SB ... IAC SE: RFC 2217 acknowledgements and
// notifications; others are ignored.
func (p *netPort) subnegotiation(sb []byte) {
	if len(sb) < 2 || sb[0] != optComPort {
		return
	}
	cmd, val := sb[1], append([]byte(nil), sb[2:]...)
	p.tmu.Lock()
	defer p.tmu.Unlock()
	switch {
	case cmd == cpServerReplies+cpNotifyModem && len(val) == 1:
		p.modem = val[0]
	case cmd == cpServerReplies+cpNotifyLine:
	case cmd == cpServerReplies+cpFlowSuspend:
		if !p.suspend {
			p.suspend, p.resumed = true, make(chan struct{})
		}
	case cmd == cpServerReplies+cpFlowResume:
		if p.suspend {
			p.suspend = false
			close(p.resumed)
		}
	case cmd > cpServerReplies:
		for i, w := range p.waiters {
			if w.cmd == cmd-cpServerReplies {
				w.ch <- val
				p.waiters = append(p.waiters[:i], p.waiters[i+1:]...)
				return
			}
		}
	}
}
