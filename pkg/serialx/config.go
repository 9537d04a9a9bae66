// The console's configuration and its validation into a serial.Mode.

package serialx

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.bug.st/serial"

	"github.com/hilrun/hilrun/pkg/gate/devices"
	"github.com/hilrun/hilrun/pkg/gate/dial"
	"github.com/hilrun/hilrun/pkg/redact"
)

// Config describes a serial console.
type Config struct {
	// Path is the device, /dev/ttyACM0 or COM3, or a network port:
	// tcp://HOST:PORT for a raw socket or rfc2217://HOST:PORT for telnet
	// with RFC 2217 serial port control (see NetworkPort). A network port
	// takes no UUCP lock: the server decides who may connect (ser2net
	// serves one connection at a time by default). On a raw socket the line
	// settings are the server's (setting any is a warning), and modem
	// control and flow control fail with an error wrapping ErrNoModemLines
	// that says to use rfc2217://. It may be empty when Resolve is set.
	Path string
	// Baud is the bit rate in bits per second; 0 means 115200.
	Baud int
	// DataBits is 5, 6, 7 or 8; 0 means 8.
	DataBits int
	// Parity is none (the default), odd, even, mark or space.
	Parity string
	// StopBits is "1" (the default), "1.5" or "2".
	StopBits string
	// FlowControl is none (the default), rtscts (hardware is accepted for
	// it) or xonxoff (software). Flow control is only supported on Linux.
	FlowControl string
	// DTR and RTS set the modem output lines after opening, and again
	// after every reconnection and Reacquire; nil leaves the driver's
	// default, which on Linux and macOS is asserted (the kernel raises both
	// lines when a tty is opened). The console assumes that level for the
	// lines SetLines, PulseLines and ResetSequence did not set since. A pty
	// has no modem lines: set these only for real serial ports.
	DTR, RTS *bool
	// Reconnect makes a console whose device disconnected try to reopen it
	// every 150 ms; offsets continue, so cursors stay valid. Meanwhile
	// waiting expects and captures keep waiting (their timeouts bound them)
	// and writes wait up to ReconnectWait. Without Reconnect a disconnection
	// fails them at once with ErrDisconnected.
	Reconnect bool
	// Resolve, if set, finds the port's path when the console opens with
	// an empty Path and on every reconnection attempt, for devices whose
	// path changes when they re-enumerate (see FindUSB). nil reuses Path.
	Resolve func(ctx context.Context) (string, error)
	// LogDir, if set, receives NAME.log, the exact bytes received, and
	// NAME.timeline.jsonl, one JSON object per received chunk
	// ({"t","us","dir":"rx","off","n"}), per write (dir "tx", with "data",
	// the bytes sent as a JSON string when they are valid UTF-8, else
	// "hex", the bytes in hexadecimal) and per disconnection or
	// reconnection, release and reacquisition (dir "event", with "event"
	// and "detail"). Modem control is recorded as events too: "lines" after
	// each change of DTR or RTS, with both levels then in effect ("dtr=0
	// rts=1"); "pulse" ("dtr=0 for 100ms"), "break" ("250ms") and
	// "reset_sequence" ("esp32") when one starts; "modem_error" when one
	// fails. "us" counts microseconds since the console opened and "off"
	// is the stream offset. A log file that cannot be written (a full
	// disk) does not stop the console: Warn is told at once, and LogErr
	// says what was lost.
	LogDir string
	// Secrets are values the console never lets out: every byte of each
	// becomes '*' in its buffer, logs and receivers, split across chunks
	// or not (see secrets.go). nil hides nothing.
	Secrets *redact.Set
	// SecretFlush is how long the console holds back the end of what it
	// received while that end could be the start of a secret, once the
	// device is quiet; 0 means stream.DefaultSettle (1 s).
	SecretFlush time.Duration
	// BufferSize is how many received bytes stay available for matching,
	// in bytes; 0 means 1 MiB.
	BufferSize int
	// LockDir is the directory of UUCP lock files. While the port is open
	// the console holds LCK..NAME there (LCK..ttyUSB0 for /dev/ttyUSB0 or
	// any symlink to it), holding this process's PID, as minicom and
	// picocom do, so that programs honouring lock files leave the port
	// alone and hilrun leaves theirs: a port locked by a live process fails
	// to open with a Busy *OpenError naming it; a lock whose process is gone
	// is taken over. "" means /var/lock, else /run/lock, whichever exists.
	// When the lock cannot be created (the directory is missing or not
	// writable: on most systems only root and the dialout or uucp group may
	// write it) the port opens anyway after a warning. A pseudo-terminal
	// (/dev/pts/N) takes no lock file: its numbers are reused too soon for
	// one, and no other program coordinates on them; it is locked with
	// flock on the device instead (see lock.go). Unix only.
	LockDir string
	// NoLock disables the lock file; the port is still opened in exclusive
	// mode (TIOCEXCL), which root ignores.
	NoLock bool
	// Devices is the device gate's policy a serial device opens through,
	// and is locked through; the zero policy opens none.
	Devices devices.Policy
	// Dial is the dial gate's policy a network console (tcp://,
	// rfc2217://) connects through; the zero policy connects to none.
	Dial dial.Policy
	// OpenPort, if set, opens the port instead of Devices, for tests
	// and simulators. The port it returns must behave like go.bug.st/serial's:
	// Read returns (0, nil) when the read timeout (set once, after opening)
	// passes without data, Close makes a Read in progress return an error,
	// and it is comparable (a pointer). Opening is otherwise unchanged: the
	// UUCP lock is taken when path names an existing file (a path that is
	// not a file takes none), DTR and RTS are set as configured, and flow
	// control other than none fails, as it needs the descriptor of a
	// go.bug.st/serial port. Exclusive mode (TIOCEXCL) is serial.Open's own
	// business and the opener's.
	OpenPort func(path string, mode *serial.Mode) (serial.Port, error)
	// Warn, if set, receives warnings about problems that do not stop the
	// console, such as a lock file that could not be created. Each distinct
	// message is reported once per console. It may be called from any
	// goroutine, but not concurrently.
	Warn func(msg string)
}

// mode validates cfg and returns its serial.Mode.
func (cfg Config) mode() (*serial.Mode, error) {
	m := &serial.Mode{BaudRate: cfg.Baud, DataBits: cfg.DataBits}
	if m.BaudRate == 0 {
		m.BaudRate = 115200
	}
	if m.BaudRate < 0 {
		return nil, fmt.Errorf("invalid baud rate %d", cfg.Baud)
	}
	if m.DataBits == 0 {
		m.DataBits = 8
	}
	if m.DataBits < 5 || m.DataBits > 8 {
		return nil, fmt.Errorf("invalid data bits %d (want 5, 6, 7 or 8)", cfg.DataBits)
	}
	switch strings.ToLower(cfg.Parity) {
	case "", "none":
		m.Parity = serial.NoParity
	case "odd":
		m.Parity = serial.OddParity
	case "even":
		m.Parity = serial.EvenParity
	case "mark":
		m.Parity = serial.MarkParity
	case "space":
		m.Parity = serial.SpaceParity
	default:
		return nil, fmt.Errorf("invalid parity %q (want none, odd, even, mark or space)", cfg.Parity)
	}
	switch cfg.StopBits {
	case "", "1":
		m.StopBits = serial.OneStopBit
	case "1.5":
		m.StopBits = serial.OnePointFiveStopBits
	case "2":
		m.StopBits = serial.TwoStopBits
	default:
		return nil, fmt.Errorf("invalid stop bits %q (want 1, 1.5 or 2)", cfg.StopBits)
	}
	if _, err := cfg.flowControl(); err != nil {
		return nil, err
	}
	return m, nil
}

func (cfg Config) flowControl() (string, error) {
	switch f := strings.ToLower(cfg.FlowControl); f {
	case "", "none":
		return "none", nil
	case "rtscts", "xonxoff":
		return f, nil
	case "hardware":
		return "rtscts", nil
	case "software":
		return "xonxoff", nil
	}
	return "", fmt.Errorf("invalid flow control %q (want none, rtscts or xonxoff; hardware and software are accepted for rtscts and xonxoff)", cfg.FlowControl)
}
