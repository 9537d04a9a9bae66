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
	fd, err := unix.Open(port, unix.O_RDWR|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return childOutput{}, fmt.Errorf("open %s: %w", port, err)
	}
	closeFD := func() { unix.Close(fd) }
	defer func() { closeFD() }()
	if t, err := unix.IoctlGetTermios(fd, unix.TCGETS); err == nil {
		// cfmakeraw, as the C client does.
		t.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
		t.Oflag &^= unix.OPOST
		t.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
		t.Cflag &^= unix.CSIZE | unix.PARENB
		t.Cflag |= unix.CS8
		if err := unix.IoctlSetTermios(fd, unix.TCSETS, t); err != nil {
			return childOutput{}, fmt.Errorf("make %s raw: %w", port, err)
		}
	}
	buf := make([]byte, 1<<16)
	var seen []byte
	var pf *os.File
	switch watch {
	case "":
	case "poller":
		// os.NewFile registers a non-blocking descriptor with the poller;
		// pf then owns fd and closes it.
		pf = os.NewFile(uintptr(fd), port)
		closeFD = func() { pf.Close() }
	case "input":
		ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
		if err != nil {
			return childOutput{}, fmt.Errorf("create an epoll instance: %w", err)
		}
		if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}); err != nil {
			unix.Close(ep)
			return childOutput{}, fmt.Errorf("watch %s for input: %w", port, err)
		}
		if err := unix.SetNonblock(ep, true); err != nil {
			unix.Close(ep)
			return childOutput{}, fmt.Errorf("make the epoll instance non-blocking: %w", err)
		}
		// os.NewFile registers the non-blocking instance with the poller.
		ef := os.NewFile(uintptr(ep), "epoll")
		defer ef.Close()
		if errors.Is(ef.SetReadDeadline(time.Time{}), os.ErrNoDeadline) {
			return childOutput{}, errors.New("the poller does not take the epoll instance")
		}
	default:
		return childOutput{}, fmt.Errorf("unknown watch %q", watch)
	}
	put := func(s string) error {
		if pf != nil {
			if _, err := pf.Write([]byte(s)); err != nil {
				return fmt.Errorf("write to %s: %w", port, err)
			}
			return nil
		}
		for b := []byte(s); len(b) > 0; {
			if ctx.Err() != nil {
				return fmt.Errorf("write to %s: %w", port, ctx.Err())
			}
			k, err := unix.Write(fd, b)
			if err == unix.EINTR || err == unix.EAGAIN {
				continue
			}
			if err != nil {
				return fmt.Errorf("write to %s: %w", port, err)
			}
			b = b[k:]
		}
		return nil
	}
	// expect polls and reads until want has arrived.
	expect := func(want string) error {
		for !bytes.Contains(seen, []byte(want)) {
			if ctx.Err() != nil {
				return fmt.Errorf("wait for %q: %w", want, ctx.Err())
			}
			p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			if _, err := unix.Poll(p, 1000); err != nil && err != unix.EINTR {
				return fmt.Errorf("poll %s: %w", port, err)
			}
			k, err := unix.Read(fd, buf)
			switch {
			case err == unix.EAGAIN || err == unix.EINTR:
			case err != nil:
				return fmt.Errorf("read %s: %w", port, err)
			case k == 0:
				return fmt.Errorf("read %s: the board hung up", port)
			default:
				seen = append(seen, buf[:k]...)
			}
		}
		seen = seen[:0]
		return nil
	}
	drain := func() {
		for {
			if k, err := unix.Read(fd, buf); err != nil || k <= 0 {
				return
			}
		}
	}
	if err := put("echo sync\n"); err != nil {
		return childOutput{}, err
	}
	if err := expect(syncReply); err != nil {
		return childOutput{}, err
	}
	t0 := time.Now()
	var out childOutput
	for i := range n {
		sleepAbs(t0.Add(time.Duration(i)*every), false, 0)
		if err := put("echo p" + strconv.Itoa(i) + "\n"); err != nil {
			return childOutput{}, err
		}
		out.SentNs = append(out.SentNs, int64(time.Since(t0)))
		drain()
	}
	if err := put("echo end\n"); err != nil {
		return childOutput{}, err
	}
	return out, expect("end\r\n" + prompt)
}
