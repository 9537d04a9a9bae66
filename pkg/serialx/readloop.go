// The reader: one goroutine per open port that reads it chunk by chunk into
// the buffer, the log and the receivers.

package serialx

import (
	"sync"
	"time"

	"go.bug.st/serial"
)

// reader is one run of the goroutine that reads a port, from an open (or
// reacquisition) to Close or Release.
type reader struct {
	stop     chan struct{} // closed by halt
	stopOnce sync.Once
	done     chan struct{} // closed when the goroutine exits
}

func (r *reader) halt() { r.stopOnce.Do(func() { close(r.stop) }) }

func (r *reader) stopped() bool {
	select {
	case <-r.stop:
		return true
	default:
		return false
	}
}

// startReaderLocked starts reading port; c.mu must be held for writing.
func (c *Console) startReaderLocked(port serial.Port) {
	rd := &reader{stop: make(chan struct{}), done: make(chan struct{})}
	c.rd = rd
	c.base = c.buf.End() // the previous reader, if any, has stopped
	go c.readLoop(port, rd)
}

// readLoop reads the port until Close or Release, handing every chunk to
// deliver.
func (c *Console) readLoop(port serial.Port, rd *reader) {
	defer close(rd.done)
	buf := make([]byte, maxRead)
	each := func(p []byte) { c.receive(time.Now(), p) }
	for {
		err := readChunks(port, buf, each)
		if c.closing.Load() || rd.stopped() {
			return
		}
		if port = c.disconnected(port, rd, err); port == nil {
			return
		}
	}
}

// maxRead is the most the reader takes from the port at once: a burst
// comes in chunks this large rather than the driver's 4 KiB, each one
// console-log write and one search by a waiting expect.
const maxRead = 64 << 10

// chunkReader is a port that reads chunk after chunk itself (pollPort).
type chunkReader interface {
	readChunks(buf []byte, each func(p []byte)) error
}

// readChunks reads port into buf until a read fails, and returns that
// error, calling each with what every read (or, for a chunkReader, every
// burst) put there.
func readChunks(port serial.Port, buf []byte, each func(p []byte)) error {
	if cr, ok := port.(chunkReader); ok {
		return cr.readChunks(buf, each)
	}
	for {
		n, err := port.Read(buf)
		if n > 0 {
			each(buf[:n])
		}
		if err != nil {
			return err
		}
		// (0, nil) is a read timeout
	}
}

func (c *Console) deliver(at time.Time, p []byte) {
	off := c.buf.End() // only the reader appends
	c.log.rx(at, off, p)
	c.rx.Add(int64(len(p)))
	for _, r := range *c.receivers.Load() {
		r.fn(at, off, p)
	}
	c.buf.Append(at, p)
}
