package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// everyGo is the diagnostic Go loop of (l): the C client's every mode in
// Go (raw pty, absolute clock_nanosleep to t0 + i*P with a timer slack of
// 1 ns, write, drain), with no console, no poller and no runner; the only
// calls it adds are those of sleepAbs, which locks its thread and sets the
// slack each period as the runner's wait does. Its distance from the C client is the Go runtime's
// share of the period error; hilrun's distance from it is hilrun's own.
//
// With watch "poller", the port's descriptor is registered with Go's
// poller (an os.File) and the lines are written through it; everything
// else stays the same. The difference between the two loops is what Go's
// registration, which watches for writable edges too, costs a board on the
// same machine: the board's read of each line wakes the poller's thread.
// With watch "input", the port is watched for input only, through an epoll
// instance of its own registered with the poller, as hilrun's console
// watches it (pkg/serialx), and written directly.
func everyGo(ctx context.Context, port string, every time.Duration, n int, watch string) (childOutput, error) {
	p, err := openGoLoopPort(port)
	if err != nil {
		return childOutput{}, err
	}
	defer p.close()
	stop, err := p.watch(watch)
	if err != nil {
		return childOutput{}, err
	}
	defer stop()
	if err := p.put(ctx, "echo sync\n"); err != nil {
		return childOutput{}, err
	}
	if err := p.expect(ctx, syncReply); err != nil {
		return childOutput{}, err
	}
	t0 := time.Now()
	var out childOutput
	for i := range n {
		sleepAbs(t0.Add(time.Duration(i)*every), false, 0)
		if err := p.put(ctx, "echo p"+strconv.Itoa(i)+"\n"); err != nil {
			return childOutput{}, err
		}
		out.SentNs = append(out.SentNs, int64(time.Since(t0)))
		p.drain()
	}
	if err := p.put(ctx, "echo end\n"); err != nil {
		return childOutput{}, err
	}
	return out, p.expect(ctx, "end\r\n"+prompt)
}

// goLoopPort is the board's pty as everyGo drives it: a raw, non-blocking
// descriptor, read with poll and read, and written directly or, once it
// is in Go's poller, through an os.File.
type goLoopPort struct {
	name string
	fd   int
	// pf owns fd once it is registered with Go's poller (watch "poller").
	pf   *os.File
	buf  []byte
	seen []byte
}

// openGoLoopPort opens port non-blocking and makes it raw, as the C client
// does.
func openGoLoopPort(port string) (*goLoopPort, error) {
	fd, err := unix.Open(port, unix.O_RDWR|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", port, err)
	}
	if t, err := unix.IoctlGetTermios(fd, unix.TCGETS); err == nil {
		// cfmakeraw, as the C client does.
		t.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
		t.Oflag &^= unix.OPOST
		t.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
		t.Cflag &^= unix.CSIZE | unix.PARENB
		t.Cflag |= unix.CS8
		if err := unix.IoctlSetTermios(fd, unix.TCSETS, t); err != nil {
			unix.Close(fd)
			return nil, fmt.Errorf("make %s raw: %w", port, err)
		}
	}
	return &goLoopPort{name: port, fd: fd, buf: make([]byte, 1<<16)}, nil
}

// close closes the port, through pf once the poller owns it.
func (p *goLoopPort) close() {
	if p.pf != nil {
		p.pf.Close()
		return
	}
	unix.Close(p.fd)
}

// watch has the port watched as everyGo's watch says: "" not at all,
// "poller" registered with Go's poller and written through it, "input" for
// input only through an epoll instance of its own in the poller. stop
// closes that epoll instance.
func (p *goLoopPort) watch(how string) (stop func(), err error) {
	switch how {
	case "":
	case "poller":
		// os.NewFile registers a non-blocking descriptor with the poller;
		// pf then owns fd and closes it.
		p.pf = os.NewFile(uintptr(p.fd), p.name)
	case "input":
		ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
		if err != nil {
			return nil, fmt.Errorf("create an epoll instance: %w", err)
		}
		if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, p.fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(p.fd)}); err != nil {
			unix.Close(ep)
			return nil, fmt.Errorf("watch %s for input: %w", p.name, err)
		}
		if err := unix.SetNonblock(ep, true); err != nil {
			unix.Close(ep)
			return nil, fmt.Errorf("make the epoll instance non-blocking: %w", err)
		}
		// os.NewFile registers the non-blocking instance with the poller.
		ef := os.NewFile(uintptr(ep), "epoll")
		if errors.Is(ef.SetReadDeadline(time.Time{}), os.ErrNoDeadline) {
			ef.Close()
			return nil, errors.New("the poller does not take the epoll instance")
		}
		return func() { ef.Close() }, nil
	default:
		return nil, fmt.Errorf("unknown watch %q", how)
	}
	return func() {}, nil
}

// put writes s whole: through pf when the poller owns the port, else with
// write calls that retry on EINTR and EAGAIN.
func (p *goLoopPort) put(ctx context.Context, s string) error {
	if p.pf != nil {
		if _, err := p.pf.Write([]byte(s)); err != nil {
			return fmt.Errorf("write to %s: %w", p.name, err)
		}
		return nil
	}
	for b := []byte(s); len(b) > 0; {
		if ctx.Err() != nil {
			return fmt.Errorf("write to %s: %w", p.name, ctx.Err())
		}
		k, err := unix.Write(p.fd, b)
		if err == unix.EINTR || err == unix.EAGAIN {
			continue
		}
		if err != nil {
			return fmt.Errorf("write to %s: %w", p.name, err)
		}
		b = b[k:]
	}
	return nil
}

// expect polls and reads until want has arrived.
func (p *goLoopPort) expect(ctx context.Context, want string) error {
	for !bytes.Contains(p.seen, []byte(want)) {
		if ctx.Err() != nil {
			return fmt.Errorf("wait for %q: %w", want, ctx.Err())
		}
		pfd := []unix.PollFd{{Fd: int32(p.fd), Events: unix.POLLIN}}
		if _, err := unix.Poll(pfd, 1000); err != nil && err != unix.EINTR {
			return fmt.Errorf("poll %s: %w", p.name, err)
		}
		k, err := unix.Read(p.fd, p.buf)
		switch {
		case err == unix.EAGAIN || err == unix.EINTR:
		case err != nil:
			return fmt.Errorf("read %s: %w", p.name, err)
		case k == 0:
			return fmt.Errorf("read %s: the board hung up", p.name)
		default:
			p.seen = append(p.seen, p.buf[:k]...)
		}
	}
	p.seen = p.seen[:0]
	return nil
}

// drain reads, without waiting, whatever the board has sent so far.
func (p *goLoopPort) drain() {
	for {
		if k, err := unix.Read(p.fd, p.buf); err != nil || k <= 0 {
			return
		}
	}
}
