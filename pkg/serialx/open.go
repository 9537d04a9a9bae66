// Opening a console's port: its lock directory and UUCP lock, the opener
// (device gate, network port or Config.OpenPort), modem lines, flow control
// and read timeout.

package serialx

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"

	"go.bug.st/serial"

	"github.com/hilrun/hilrun/pkg/steps"
)

// findLockDir returns the directory for the console's lock files, "" for
// none.
func (c *Console) findLockDir() string {
	if c.cfg.NoLock {
		return ""
	}
	if c.cfg.LockDir != "" {
		return c.cfg.LockDir
	}
	for _, dir := range defaultLockDirs {
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			return dir
		}
	}
	c.warn(fmt.Sprintf("no lock directory (%s): opening serial ports without lock files", strings.Join(defaultLockDirs, ", ")))
	return ""
}

// openPort takes the UUCP lock of path, then opens and configures the
// port; errors are *OpenError. The lock comes first so that a port another
// program has locked is not touched (opening some USB adapters toggles DTR,
// which resets the board).
func (c *Console) openPort(ctx context.Context, path string) (serial.Port, *portLock, error) {
	var lock *portLock
	network := steps.NetworkPort(path) && c.cfg.OpenPort == nil
	if c.lockDir != "" && !network {
		l, busy, err := acquireLock(c.cfg.Devices, c.lockDir, path)
		if busy != nil {
			return nil, nil, busy
		}
		if err != nil {
			c.warn(fmt.Sprintf("%s: %v; opening %s without a lock file, so programs that honour lock files will not see it is in use", c.lockDir, err, path))
		}
		lock = l
	}
	open := c.cfg.OpenPort
	switch {
	case network:
		open = func(path string, mode *serial.Mode) (serial.Port, error) {
			p, err := openNetPort(ctx, c.cfg.Dial, path, mode)
			if err != nil {
				return nil, err // not a typed nil
			}
			return p, nil
		}
		c.warnRawSettings(path)
	case open == nil:
		open = c.cfg.Devices.OpenSerial
	}
	port, err := open(path, c.mode)
	if oe, ok := errors.AsType[*OpenError](err); ok && network {
		return nil, nil, oe
	}
	if err != nil {
		lock.release()
		return nil, nil, classify(path, err)
	}
	if port == nil { // a Config.OpenPort that returned neither port nor error
		lock.release()
		return nil, nil, &OpenError{Path: path, Kind: Other, Err: errors.New("the port opener returned no port")}
	}
	fail := func(kind OpenErrorKind, err error) (serial.Port, *portLock, error) {
		port.Close()
		lock.release()
		return nil, nil, &OpenError{Path: path, Kind: kind, Err: err}
	}
	for _, line := range []struct {
		name string
		val  *bool
		set  func(bool) error
	}{{"DTR", c.cfg.DTR, port.SetDTR}, {"RTS", c.cfg.RTS, port.SetRTS}} {
		if line.val == nil {
			continue
		}
		if err := line.set(*line.val); err != nil {
			if errors.Is(err, ErrNoModemLines) {
				return fail(Invalid, fmt.Errorf("set %s: %w", line.name, err))
			}
			if errors.Is(err, syscall.ENOTTY) || errors.Is(err, syscall.EINVAL) {
				return fail(Invalid, fmt.Errorf("port has %w (set %s: %w)", ErrNoModemLines, line.name, err))
			}
			return fail(Other, fmt.Errorf("set %s: %w", line.name, err))
		}
	}
	flow, _ := c.cfg.flowControl() // validated by mode
	if np, ok := port.(*netPort); ok && (flow != "none" || np.telnet) {
		// Over RFC 2217 "none" is set too: the server's port may have
		// been left with flow control by its last user.
		if err := np.setFlow(flow); err != nil {
			return fail(Invalid, err)
		}
	} else if flow != "none" {
		if err := setFlowControl(port, flow); err != nil {
			return fail(Invalid, err)
		}
	}
	if err := port.SetReadTimeout(readTimeout); err != nil {
		return fail(Other, fmt.Errorf("set read timeout: %w", err))
	}
	if c.cfg.OpenPort == nil && !network {
		pp, err := pollable(port, path)
		if err != nil {
			// Reads through the library work, at a cost in latency.
			c.warn(fmt.Sprintf("%s: reading through go.bug.st/serial: %v", path, err))
		}
		port = pp
	}
	return port, lock, nil
}

// warnRawSettings warns that the line settings of a tcp:// port are the
// server's, when the console's configuration sets any.
func (c *Console) warnRawSettings(path string) {
	if scheme, _, err := steps.ParsePortURL(path); err != nil || scheme != schemeTCP {
		return
	}
	cfg := c.cfg
	if cfg.Baud == 0 && cfg.DataBits == 0 && (cfg.Parity == "" || strings.EqualFold(cfg.Parity, "none")) && (cfg.StopBits == "" || cfg.StopBits == "1") {
		return
	}
	c.warn(fmt.Sprintf("%s is a raw socket: baud rate, data bits, parity and stop bits are set on the server, not by hilrun (use rfc2217:// to set them)", path))
}
