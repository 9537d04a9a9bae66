package serialx

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hilrun/hilrun/internal/ser2net"
	"github.com/hilrun/hilrun/pkg/sim"
	"github.com/hilrun/hilrun/pkg/stream"
	"github.com/hilrun/hilrun/pkg/testenv"
)

// The console suite below runs against a pty directly and through Debian's
// ser2net in front of that pty, raw (tcp://) and with RFC 2217
// (rfc2217://): a network console must behave as a local one.

// startSer2net starts ser2net offering device in mode for the rest of the
// test; it skips when ser2net is missing (fails under CI=true).
func startSer2net(t *testing.T, device string, mode ser2net.Mode) *ser2net.Server {
	t.Helper()
	if _, err := ser2net.Path(); err != nil {
		testenv.Missing(t, "%v", err)
	}
	s, err := ser2net.Start(timeout(t, 20*time.Second), t.TempDir(), device, mode)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() {
			t.Logf("ser2net said:\n%s", s.Output())
		}
	})
	return s
}

// consoleTargets are the ways the suite reaches a device at path.
var consoleTargets = []struct {
	name string
	mode ser2net.Mode // "" for the pty itself
}{
	{"pty", ""},
	{"ser2net raw", ser2net.Raw},
	{"ser2net rfc2217", ser2net.RFC2217},
}

// reach returns the port path for device through target, with the server
// when there is one.
func reach(t *testing.T, device string, mode ser2net.Mode) (string, *ser2net.Server) {
	if mode == "" {
		return device, nil
	}
	s := startSer2net(t, device, mode)
	return s.URL(), s
}

func TestConsoleSuiteOverNetwork(t *testing.T) {
	for _, tc := range consoleTargets {
		t.Run(tc.name, func(t *testing.T) {
			t.Run("send expect and a 1 MB stream", func(t *testing.T) {
				b := sim.New(sim.Options{})
				if err := b.Start(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { b.Close() })
				path, _ := reach(t, b.SerialPath(), tc.mode)
				dir := t.TempDir()
				c := openNet(t, Config{Devices: anyDevice, Dial: anyAddr, Path: path, LogDir: dir, NoLock: true})
				ctx := timeout(t, 60*time.Second)
				if _, err := c.Expect(ctx, 0, lit(sim.DefaultPrompt), nil); err != nil {
					t.Fatalf("no prompt: %v", err)
				}
				cur, err := c.Write(ctx, []byte("version\r\n"))
				if err != nil {
					t.Fatal(err)
				}
				if _, err := c.Expect(ctx, cur, lit(sim.DefaultVersion), nil); err != nil {
					t.Fatal(err)
				}

				const n = 1 << 20
				want := sim.StreamData(n, "crlf")
				cur, err = c.Write(ctx, []byte("stream 1048576\r\n"))
				if err != nil {
					t.Fatal(err)
				}
				if _, err := c.Expect(ctx, cur, []stream.Pattern{stream.Literal(string(want[n-200:]) + "\r\n" + sim.DefaultPrompt)}, nil); err != nil {
					t.Fatalf("the stream did not end: %v", err)
				}
				if err := c.Close(); err != nil {
					t.Fatal(err)
				}
				raw, _ := c.LogPaths()
				log, err := os.ReadFile(raw)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Contains(log, want) {
					t.Errorf("the raw log (%d bytes) does not hold the 1 MiB stream byte for byte", len(log))
				}
				if got := c.Stats().RxBytes; got != int64(len(log)) {
					t.Errorf("received %d bytes, logged %d", got, len(log))
				}
			})

			t.Run("binary both ways", func(t *testing.T) {
				d := newDevice(t)
				path, _ := reach(t, d.path, tc.mode)
				c := openNet(t, Config{Devices: anyDevice, Dial: anyAddr, Path: path, NoLock: true})
				data := allBytes()
				ctx := timeout(t, 30*time.Second)
				cur, err := c.Write(ctx, data)
				if err != nil {
					t.Fatal(err)
				}
				got := make([]byte, len(data))
				if _, err := io.ReadFull(d.master, got); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, data) {
					t.Errorf("the device received\n%q\nwant\n%q", got, data)
				}
				d.print(string(data))
				if _, err := c.Expect(ctx, cur, []stream.Pattern{stream.Literal(string(data))}, nil); err != nil {
					t.Errorf("the console did not receive every byte value: %v; got %q", err, c.Tail(10, 1000))
				}
			})

			if tc.mode == "" {
				return // reconnection to a pty: see TestReconnect
			}
			t.Run("reconnect after a server restart", func(t *testing.T) {
				b := sim.New(sim.Options{})
				if err := b.Start(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { b.Close() })
				path, srv := reach(t, b.SerialPath(), tc.mode)
				c := openNet(t, Config{Devices: anyDevice, Dial: anyAddr, Path: path, Reconnect: true, LogDir: t.TempDir(), NoLock: true})
				ctx := timeout(t, 60*time.Second)
				if _, err := c.Expect(ctx, 0, lit(sim.DefaultPrompt), nil); err != nil {
					t.Fatal(err)
				}
				if err := srv.Restart(ctx); err != nil {
					t.Fatal(err)
				}
				eventually(t, "the reconnection", func() bool { return c.Stats().Reconnects == 1 })
				cur, err := c.Write(ctx, []byte("version\r\n"))
				if err != nil {
					t.Fatal(err)
				}
				if _, err := c.Expect(ctx, cur, lit(sim.DefaultVersion), nil); err != nil {
					t.Fatal(err)
				}
				_, tl := c.LogPaths()
				timeline, err := os.ReadFile(tl)
				if err != nil {
					t.Fatal(err)
				}
				for _, ev := range []string{`"event":"disconnected"`, `"event":"reconnected"`} {
					if !strings.Contains(string(timeline), ev) {
						t.Errorf("the timeline has no %s", ev)
					}
				}
			})
		})
	}
}

// TestSer2netBusy checks that a second console on a port ser2net already
// serves is told the port is busy, in the server's words.
func TestSer2netBusy(t *testing.T) {
	d := newDevice(t)
	srv := startSer2net(t, d.path, ser2net.RFC2217)
	openNet(t, Config{Devices: anyDevice, Dial: anyAddr, Path: srv.URL(), NoLock: true})
	_, err := Open(timeout(t, 30*time.Second), "second", Config{Devices: anyDevice, Dial: anyAddr, Path: srv.URL(), NoLock: true})
	var oe *OpenError
	if !errors.As(err, &oe) || oe.Kind != Busy || !strings.Contains(err.Error(), "already in use") {
		t.Errorf("a second Open = %v, want a Busy *OpenError quoting the server", err)
	}
}

// TestRFC2217LineSettings checks that the settings a console asks for over
// RFC 2217 reach the device: ser2net applies them to the pty, whose
// termios the test reads back. Linux's pty driver keeps every pty at CS8
// without PARENB whatever is asked (pty_set_termios), so what the pty can
// show is the speed, the stop bits and PARODD; the data bits and parity
// enable are covered by the server's acknowledgement, which the console
// checks against what it asked (see TestRFC2217Peer).
func TestRFC2217LineSettings(t *testing.T) {
	d := newDevice(t)
	srv := startSer2net(t, d.path, ser2net.RFC2217)
	for _, tc := range []struct {
		name   string
		cfg    Config
		speed  uint32
		cflags uint32 // the CSTOPB and PARODD bits expected
	}{
		{"9600 7E2", Config{Devices: anyDevice, Dial: anyAddr, Baud: 9600, DataBits: 7, Parity: "even", StopBits: "2"}, unix.B9600, unix.CSTOPB},
		{"57600 8O1", Config{Devices: anyDevice, Dial: anyAddr, Baud: 57600, Parity: "odd"}, unix.B57600, unix.PARODD},
		{"115200 8N1", Config{Devices: anyDevice, Dial: anyAddr}, unix.B115200, 0},
		{"19200 8O2", Config{Devices: anyDevice, Dial: anyAddr, Baud: 19200, Parity: "odd", StopBits: "2"}, unix.B19200, unix.PARODD | unix.CSTOPB},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Path, cfg.NoLock = srv.URL(), true
			c := openNet(t, cfg)
			tio, err := unix.IoctlGetTermios(int(d.slave.Fd()), unix.TCGETS)
			if err != nil {
				t.Fatal(err)
			}
			if got := tio.Cflag & unix.CBAUD; got != tc.speed {
				t.Errorf("speed bits %#o, want %#o", got, tc.speed)
			}
			mask := uint32(unix.PARODD | unix.CSTOPB)
			if got := tio.Cflag & mask; got != tc.cflags {
				t.Errorf("stop and parity bits %#o, want %#o", got, tc.cflags)
			}
			c.Close()
		})
	}
}
