// RFC 2217 serial port control on a network port: the option requests a
// telnet port opens with, commands and their acknowledgements, and the
// serial.Port methods for line settings, modem lines and break.

package serialx

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.bug.st/serial"
)

type ackWaiter struct {
	cmd byte
	ch  chan []byte // receives the acknowledged value
}

// RFC 2217 commands, client to server; the server acknowledges command c
// with c+100.
const (
	cpSetBaud       = 1
	cpSetDataSize   = 2
	cpSetParity     = 3
	cpSetStopSize   = 4
	cpSetControl    = 5
	cpNotifyLine    = 6
	cpNotifyModem   = 7
	cpFlowSuspend   = 8
	cpFlowResume    = 9
	cpPurgeData     = 12
	cpServerReplies = 100
)

// SET-CONTROL values.
const (
	ctlFlowNone    = 1
	ctlFlowXonXoff = 2
	ctlFlowRTSCTS  = 3
	ctlBreakOn     = 5
	ctlBreakOff    = 6
	ctlDTROn       = 8
	ctlDTROff      = 9
	ctlRTSOn       = 11
	ctlRTSOff      = 12
)

// requests returns the option requests a telnet port opens with: BINARY
// both ways, SGA both ways, and to perform COM-PORT-OPTION, marking them
// asked. It runs before the reader starts, so that the server's own
// opening burst of negotiation cannot settle the options before they are
// asked for.
func (p *netPort) requests() []byte {
	var out []byte
	for _, r := range []struct{ verb, opt byte }{
		{tnWILL, optBinary}, {tnDO, optBinary}, {tnWILL, optSGA}, {tnDO, optSGA}, {tnWILL, optComPort},
	} {
		if r.verb == tnWILL {
			p.opts[r.opt].askedUs = true
		} else {
			p.opts[r.opt].askedHim = true
		}
		out = append(out, tnIAC, r.verb, r.opt)
	}
	return out
}

// negotiate sends the option requests and waits until the server has
// answered every one.
func (p *netPort) negotiate(ctx context.Context, requests []byte) error {
	if err := p.writeRaw(requests); err != nil {
		return err
	}
	select {
	case <-p.settled:
	case <-ctx.Done():
		return fmt.Errorf("the server did not answer the telnet option requests: %w", ctxErr(ctx))
	case <-p.done:
		return p.endedErr()
	}
	p.tmu.Lock()
	com := p.opts[optComPort].us
	p.tmu.Unlock()
	if !com {
		return fmt.Errorf("the server refused RFC 2217 serial port control (COM-PORT-OPTION); if it is a raw port, use tcp://")
	}
	return nil
}

// command sends RFC 2217 command cmd with value and waits for the server
// to acknowledge it; it returns the value the server says is in effect.
func (p *netPort) command(cmd byte, value []byte) ([]byte, error) {
	w := &ackWaiter{cmd: cmd, ch: make(chan []byte, 1)}
	p.tmu.Lock()
	p.waiters = append(p.waiters, w)
	p.tmu.Unlock()
	out := []byte{tnIAC, tnSB, optComPort, cmd}
	for _, c := range value {
		if c == tnIAC {
			out = append(out, tnIAC)
		}
		out = append(out, c)
	}
	out = append(out, tnIAC, tnSE)
	if err := p.writeRaw(out); err != nil {
		p.dropWaiter(w)
		return nil, err
	}
	t := time.NewTimer(netAckTimeout)
	defer t.Stop()
	select {
	case v, ok := <-w.ch:
		if !ok {
			return nil, p.socketErr()
		}
		return v, nil
	case <-p.closed:
		return nil, errNetClosed
	case <-p.abort:
		p.dropWaiter(w)
		return nil, fmt.Errorf("%s: stopped waiting for the acknowledgement of %s: the port is closing", p.url, describeValue(cmd, value))
	case <-t.C:
		p.dropWaiter(w)
		msg := fmt.Sprintf("%s did not acknowledge %s within %s", p.url, describeValue(cmd, value), netAckTimeout)
		if cmd == cpSetControl {
			// ser2net stays silent when the ioctl fails, as on a pty.
			msg += " (a server stays silent when its port cannot do it, as a pty without modem lines)"
		}
		return nil, errors.New(msg)
	}
}

func (p *netPort) dropWaiter(w *ackWaiter) {
	p.tmu.Lock()
	defer p.tmu.Unlock()
	for i, x := range p.waiters {
		if x == w {
			p.waiters = append(p.waiters[:i], p.waiters[i+1:]...)
			return
		}
	}
}

func (p *netPort) failWaiters() {
	p.tmu.Lock()
	defer p.tmu.Unlock()
	for _, w := range p.waiters {
		close(w.ch)
	}
	p.waiters = nil
}

func commandName(cmd byte) string {
	switch cmd {
	case cpSetBaud:
		return "SET-BAUDRATE"
	case cpSetDataSize:
		return "SET-DATASIZE"
	case cpSetParity:
		return "SET-PARITY"
	case cpSetStopSize:
		return "SET-STOPSIZE"
	case cpSetControl:
		return "SET-CONTROL"
	case cpPurgeData:
		return "PURGE-DATA"
	}
	return "command " + strconv.Itoa(int(cmd))
}

// describeValue names a command and its value for messages:
// "SET-CONTROL 8 (DTR on)".
func describeValue(cmd byte, value []byte) string {
	s := commandName(cmd)
	if len(value) != 1 {
		return s
	}
	s += " " + strconv.Itoa(int(value[0]))
	if cmd == cpSetControl {
		names := map[byte]string{ctlFlowNone: "no flow control", ctlFlowXonXoff: "XON/XOFF", ctlFlowRTSCTS: "RTS/CTS",
			ctlBreakOn: "break on", ctlBreakOff: "break off", ctlDTROn: "DTR on", ctlDTROff: "DTR off", ctlRTSOn: "RTS on", ctlRTSOff: "RTS off"}
		if n, ok := names[value[0]]; ok {
			s += " (" + n + ")"
		}
	}
	return s
}

// setting sends a one-byte command and checks the server applied value.
func (p *netPort) setting(cmd, value byte, what string) error {
	got, err := p.command(cmd, []byte{value})
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if len(got) != 1 || got[0] != value {
		return fmt.Errorf("%s: %s answered %v to %s: it did not take effect", what, p.url, got, describeValue(cmd, []byte{value}))
	}
	return nil
}

// SetMode sets the line settings through RFC 2217 in the order the RFC
// recommends. On a raw socket it does nothing: the server owns them.
func (p *netPort) SetMode(mode *serial.Mode) error {
	if !p.telnet || mode == nil {
		return nil
	}
	baud := uint32(mode.BaudRate)
	got, err := p.command(cpSetBaud, []byte{byte(baud >> 24), byte(baud >> 16), byte(baud >> 8), byte(baud)})
	if err != nil {
		return fmt.Errorf("set baud rate %d: %w", baud, err)
	}
	if len(got) != 4 {
		return fmt.Errorf("set baud rate %d: %s answered %d bytes, not 4", baud, p.url, len(got))
	}
	if v := uint32(got[0])<<24 | uint32(got[1])<<16 | uint32(got[2])<<8 | uint32(got[3]); v != baud {
		return fmt.Errorf("set baud rate %d: %s set %d instead", baud, p.url, v)
	}
	if err := p.setting(cpSetDataSize, byte(mode.DataBits), fmt.Sprintf("set %d data bits", mode.DataBits)); err != nil {
		return err
	}
	parity := map[serial.Parity]byte{serial.NoParity: 1, serial.OddParity: 2, serial.EvenParity: 3, serial.MarkParity: 4, serial.SpaceParity: 5}[mode.Parity]
	if err := p.setting(cpSetParity, parity, "set parity"); err != nil {
		return err
	}
	stop := map[serial.StopBits]byte{serial.OneStopBit: 1, serial.TwoStopBits: 2, serial.OnePointFiveStopBits: 3}[mode.StopBits]
	return p.setting(cpSetStopSize, stop, "set stop bits")
}

// setFlow sets flow control (none, rtscts or xonxoff) on the server's port.
func (p *netPort) setFlow(flow string) error {
	if !p.telnet {
		return &rawSocketError{url: p.url, what: "flow control setting (the server's port settings apply)"}
	}
	v := map[string]byte{"none": ctlFlowNone, "rtscts": ctlFlowRTSCTS, "xonxoff": ctlFlowXonXoff}[flow]
	return p.setting(cpSetControl, v, "set flow control "+flow)
}

// SetDTR sets DTR through SET-CONTROL.
func (p *netPort) SetDTR(on bool) error {
	if !p.telnet {
		return &rawSocketError{url: p.url, what: "modem lines"}
	}
	return p.setting(cpSetControl, pick(on, ctlDTROn, ctlDTROff), "set DTR")
}

// SetRTS sets RTS through SET-CONTROL.
func (p *netPort) SetRTS(on bool) error {
	if !p.telnet {
		return &rawSocketError{url: p.url, what: "modem lines"}
	}
	return p.setting(cpSetControl, pick(on, ctlRTSOn, ctlRTSOff), "set RTS")
}

func pick(on bool, yes, no byte) byte {
	if on {
		return yes
	}
	return no
}

// Break holds the server's line in break for d (SET-CONTROL BREAK-ON,
// then BREAK-OFF). The break ends even when d could not be waited out.
func (p *netPort) Break(d time.Duration) error {
	if !p.telnet {
		return &rawSocketError{url: p.url, what: "break"}
	}
	if err := p.setting(cpSetControl, ctlBreakOn, "start a break"); err != nil {
		return err
	}
	t := time.NewTimer(d)
	select {
	case <-t.C:
	case <-p.closed:
		t.Stop()
	}
	return p.setting(cpSetControl, ctlBreakOff, "end a break")
}

// GetModemStatusBits returns the modem inputs the server last notified
// (zero until it does); on a raw socket an error wrapping ErrNoModemLines.
func (p *netPort) GetModemStatusBits() (*serial.ModemStatusBits, error) {
	if !p.telnet {
		return nil, &rawSocketError{url: p.url, what: "modem lines"}
	}
	p.tmu.Lock()
	m := p.modem
	p.tmu.Unlock()
	return &serial.ModemStatusBits{CTS: m&0x10 != 0, DSR: m&0x20 != 0, RI: m&0x40 != 0, DCD: m&0x80 != 0}, nil
}
