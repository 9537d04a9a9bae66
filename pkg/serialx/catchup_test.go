//go:build linux

package serialx

import (
	"bytes"
	"net"
	"strings"
	"testing"
	"time"
)

// CatchUp returns a cursor past everything the port held when it was
// called, however far the reader had got: a banner printed before the
// port opened is behind it, and a reply to the next write is after it.
func TestCatchUp(t *testing.T) {
	// Within what a pty holds before anyone reads it.
	banner := strings.Repeat("boot: ok, a long banner line\r\n", 100) + "sim> "
	for _, tc := range []struct {
		name string
		// open returns a console whose port has been sent banner
		// (bannerData, as data) and is not read yet.
		open func(t *testing.T) *Console
	}{
		{"pty", func(t *testing.T) *Console {
			d := newDevice(t)
			d.print(banner)
			return d.open(Config{Devices: anyDevice, Dial: anyAddr, NoLock: true})
		}},
		{"tcp", func(t *testing.T) *Console {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ln.Close() })
			written := make(chan struct{})
			go func() {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				t.Cleanup(func() { c.Close() })
				c.Write([]byte(banner))
				close(written)
			}()
			c := openNet(t, Config{Devices: anyDevice, Dial: anyAddr, Path: "tcp://" + ln.Addr().String(), NoLock: true})
			<-written
			return c
		}},
		{"rfc2217", func(t *testing.T) *Console {
			peer := newRFC2217Peer(t)
			c := openNet(t, Config{Devices: anyDevice, Dial: anyAddr, Path: peer.url(), NoLock: true})
			// Telnet commands and escaped 0xff make the socket hold more
			// bytes than the data they carry.
			raw := bytes.ReplaceAll([]byte(banner), []byte("\r\n"), []byte{'\r', '\n', tnIAC, 241 /* NOP */, tnIAC, tnIAC})
			peer.send(raw)
			return c
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.open(t)
			want := len(banner)
			if tc.name == "rfc2217" {
				want += strings.Count(banner, "\r\n") // one 0xff per line
			}
			cur, err := c.CatchUp(timeout(t, 20*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if cur < int64(want) {
				t.Errorf("CatchUp = %d, want at least %d (the whole banner)", cur, want)
			}
			if data, _, _ := c.Read(0, want+1); !strings.HasSuffix(string(data), "sim> ") {
				t.Errorf("the buffer does not end with the banner's prompt: %q", stream0(data))
			}
		})
	}
}

// stream0 is the end of data, for messages.
func stream0(data []byte) []byte {
	return data[max(0, len(data)-80):]
}
