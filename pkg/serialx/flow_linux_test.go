package serialx

import (
	"testing"

	"golang.org/x/sys/unix"
)

// Flow control reaches the terminal settings through the descriptor found
// by reflection; a pty keeps the flags, so the test reads them back from the
// test's own descriptor of the same tty.
func TestFlowControl(t *testing.T) {
	tests := []struct {
		flow      string
		wantCRTS  bool
		wantIXON  bool
		wantIXOFF bool
	}{
		{flow: "none"},
		{flow: "", wantCRTS: false},
		{flow: "rtscts", wantCRTS: true},
		{flow: "RTSCTS", wantCRTS: true},
		{flow: "xonxoff", wantIXON: true, wantIXOFF: true},
		// The Rust serial MCP server's names.
		{flow: "hardware", wantCRTS: true},
		{flow: "software", wantIXON: true, wantIXOFF: true},
	}
	for _, tt := range tests {
		t.Run(tt.flow, func(t *testing.T) {
			d := newDevice(t)
			d.open(Config{Devices: anyDevice, Dial: anyAddr, FlowControl: tt.flow})
			tio, err := unix.IoctlGetTermios(int(d.slave.Fd()), unix.TCGETS)
			if err != nil {
				t.Fatal(err)
			}
			if got := tio.Cflag&unix.CRTSCTS != 0; got != tt.wantCRTS {
				t.Errorf("CRTSCTS = %v, want %v", got, tt.wantCRTS)
			}
			if got := tio.Iflag&unix.IXON != 0; got != tt.wantIXON {
				t.Errorf("IXON = %v, want %v", got, tt.wantIXON)
			}
			if got := tio.Iflag&unix.IXOFF != 0; got != tt.wantIXOFF {
				t.Errorf("IXOFF = %v, want %v", got, tt.wantIXOFF)
			}
		})
	}
}

func TestPortFD(t *testing.T) {
	d := newDevice(t)
	c := d.open(Config{Devices: anyDevice, Dial: anyAddr})
	c.mu.RLock()
	port := c.port
	c.mu.RUnlock()
	fd, err := portFD(port)
	if err != nil {
		t.Fatal(err)
	}
	// The descriptor must be the console's tty: fstat matches the slave.
	var a, b unix.Stat_t
	if err := unix.Fstat(fd, &a); err != nil {
		t.Fatal(err)
	}
	if err := unix.Fstat(int(d.slave.Fd()), &b); err != nil {
		t.Fatal(err)
	}
	if a.Rdev != b.Rdev {
		t.Errorf("descriptor %d is device %x, want %x", fd, a.Rdev, b.Rdev)
	}
	if _, err := portFD(nil); err == nil {
		t.Error("portFD(nil) succeeded")
	}
}
