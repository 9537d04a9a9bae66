// The devices the serial scenarios run on: hilrun's virtual board (the Go
// simulator, in this process) or a board that is not hilrun's, a small
// Python shell on a pty (pyboard.py) in a process of its own.

package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/hilrun/hilrun/pkg/sim"
)

// Device kinds, as -device takes them.
const (
	DeviceGo     = "go"
	DevicePython = "python"
)

// Devices lists the device kinds.
var Devices = []string{DeviceGo, DevicePython}

// device is a board a side talks to through a serial port path.
type device interface {
	SerialPath() string
	// Log returns what the device has received and, when it stamps
	// them, when it finished writing each reply.
	Log() (deviceLog, error)
}

// deviceLog is a device's record: each line received, stamped when the
// read that held its end returned, and each reply, stamped when its
// write returned.
type deviceLog struct {
	Rx []sim.RxLine
	// Tx is nil when the device does not stamp its replies (the Go
	// board).
	Tx []txStamp
}

// txStamp is the end of the write of the reply to Rx[Line].
type txStamp struct {
	At   time.Time
	Line int
}

// goDevice is the Go virtual board.
type goDevice struct{ b *sim.Board }

func (g goDevice) SerialPath() string { return g.b.SerialPath() }

func (g goDevice) Log() (deviceLog, error) { return deviceLog{Rx: g.b.Received()}, nil }

// withDevice runs fn with a fresh device of the kind Options.Device asks
// for, so that no block sees what another left in the pty.
func (bb *bencher) withDevice(ctx context.Context, fn func(d device) error) error {
	if bb.opts.Device != DevicePython {
		return bb.withBoard(func(b *sim.Board) error { return fn(goDevice{b}) })
	}
	d, err := startPyBoard(ctx, bb.opts.BoardPython, filepath.Join(bb.opts.WorkDir, "pyboard.py"), !bb.opts.BoardNormal)
	if err != nil {
		return err
	}
	err = fn(d)
	if cerr := d.Close(); err == nil && cerr != nil {
		err = cerr
	}
	return err
}

// pyBoard is pyboard.py running in a process of its own.
type pyBoard struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Reader
	path   string
	offset int64
	// FIFO says whether the board reads at SCHED_FIFO.
	FIFO bool
}

// startPyBoard starts pyboard.py with the interpreter python and waits
// for the path of its pty.
func startPyBoard(ctx context.Context, python, script string, fifo bool) (*pyBoard, error) {
	if python == "" {
		return nil, errors.New("the Python board needs python3 (-python)")
	}
	args := []string{script}
	if fifo {
		args = append(args, "--fifo")
	}
	cmd := exec.CommandContext(ctx, python, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("start the Python board: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("start the Python board: %w", err)
	}
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the Python board: %w", err)
	}
	p := &pyBoard{cmd: cmd, stdin: stdin, out: bufio.NewReaderSize(stdout, 1<<20)}
	var hello struct {
		Path   string `json:"path"`
		Offset int64  `json:"offset_ns"`
	}
	if err := p.readJSON(&hello); err != nil || hello.Path == "" {
		p.Close()
		return nil, fmt.Errorf("start the Python board: no pty path (%v)", err)
	}
	p.path, p.offset = hello.Path, hello.Offset
	return p, nil
}

func (p *pyBoard) readJSON(v any) error {
	line, err := p.out.ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("read the Python board: %w", err)
	}
	if err := json.Unmarshal(line, v); err != nil {
		return fmt.Errorf("read the Python board: %w (%q)", err, clip(string(line), 200))
	}
	return nil
}

func (p *pyBoard) SerialPath() string { return p.path }

// at converts a stamp of the board's monotonic clock to wall-clock time,
// by the offset the board measured once at its start: differences stay
// exact, and times line up with other processes' wall clocks to within
// the offset's error.
func (p *pyBoard) at(ns int64) time.Time { return time.Unix(0, ns+p.offset) }

// Log asks the board for its record so far.
func (p *pyBoard) Log() (deviceLog, error) {
	if _, err := io.WriteString(p.stdin, "dump\n"); err != nil {
		return deviceLog{}, fmt.Errorf("ask the Python board for its record: %w", err)
	}
	var rec struct {
		Rx   [][2]json.RawMessage `json:"rx"`
		Tx   [][2]int64           `json:"tx"`
		FIFO bool                 `json:"fifo"`
	}
	if err := p.readJSON(&rec); err != nil {
		return deviceLog{}, err
	}
	p.FIFO = rec.FIFO
	var l deviceLog
	for _, r := range rec.Rx {
		var ns int64
		var line string
		if json.Unmarshal(r[0], &ns) != nil || json.Unmarshal(r[1], &line) != nil {
			return deviceLog{}, fmt.Errorf("the Python board's record has a bad line %s", r[0])
		}
		l.Rx = append(l.Rx, sim.RxLine{At: p.at(ns), Line: line})
	}
	l.Tx = make([]txStamp, 0, len(rec.Tx))
	for _, t := range rec.Tx {
		l.Tx = append(l.Tx, txStamp{At: p.at(t[0]), Line: int(t[1])})
	}
	return l, nil
}

// Close ends the board: its standard input closes, and it exits.
func (p *pyBoard) Close() error {
	p.stdin.Close()
	if err := p.cmd.Wait(); err != nil {
		return fmt.Errorf("the Python board: %w", err)
	}
	return nil
}
