package serialx

import (
	"os"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/usbsys/usbsystest"
)

func TestFindUSB(t *testing.T) {
	ports := []PortInfo{
		{Path: "/dev/ttyACM0", IsUSB: true, VID: "2e8a", PID: "000a", SerialNumber: "E6614C311B"},
		{Path: "/dev/ttyACM1", IsUSB: true, VID: "2e8a", PID: "000a", SerialNumber: "E6614C3122", Product: "Pico"},
		{Path: "/dev/ttyUSB0", IsUSB: true, VID: "0403", PID: "6001", SerialNumber: "A10K"},
		{Path: "/dev/ttyS0"},
	}
	tests := []struct {
		name    string
		ports   []PortInfo
		vid     string
		pid     string
		serial  string
		want    string
		wantErr string
	}{
		{name: "unique vid pid", ports: ports, vid: "0403", pid: "6001", want: "/dev/ttyUSB0"},
		{name: "case and 0x prefix", ports: ports, vid: "0x2E8A", pid: "000A", serial: "e6614c3122", want: "/dev/ttyACM1"},
		{name: "short hex", ports: ports, vid: "403", pid: "6001", want: "/dev/ttyUSB0"},
		{
			name: "several match", ports: ports, vid: "2e8a", pid: "000a",
			wantErr: `find serial port USB 2e8a:000a: 2 match (matching: /dev/ttyACM0 2e8a:000a serial "E6614C311B", /dev/ttyACM1 2e8a:000a serial "E6614C3122" "Pico"); give a serial number to choose`,
		},
		{
			name: "none match", ports: ports, vid: "1234", pid: "5678", serial: "X",
			wantErr: `find serial port USB 1234:5678 serial "X": none found (ports: /dev/ttyACM0 2e8a:000a serial "E6614C311B", /dev/ttyACM1 2e8a:000a serial "E6614C3122" "Pico", /dev/ttyUSB0 0403:6001 serial "A10K", /dev/ttyS0 not USB)`,
		},
		{
			name: "no ports", vid: "2e8a", pid: "000a",
			wantErr: `find serial port USB 2e8a:000a: none found (no serial ports on this host)`,
		},
		{
			name: "bad vid", ports: ports, vid: "pico", pid: "000a",
			wantErr: `find serial port: invalid USB vendor ID "pico" (want 4 hex digits, like 2e8a)`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := findUSB(tt.ports, tt.vid, tt.pid, tt.serial)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Errorf("findUSB = %q, %v\nwant error %s", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("findUSB = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// ListPorts must work on a host without serial hardware.
func TestListPorts(t *testing.T) {
	ports, err := ListPorts()
	if err != nil {
		t.Fatalf("ListPorts: %v", err)
	}
	for i, p := range ports {
		if p.Path == "" {
			t.Errorf("port %d has no path", i)
		}
		if i > 0 && strings.Compare(ports[i-1].Path, p.Path) > 0 {
			t.Errorf("ports not sorted: %s before %s", ports[i-1].Path, p.Path)
		}
	}
}

// FindUSBIn matches the ports of a recorded sysfs tree: two identical
// boards are told apart by serial number, and without one both match.
func TestFindUSBIn(t *testing.T) {
	dir, err := usbsystest.BuildFile(t.TempDir(), "../usbsys/testdata/two-nucleos-hub.sysfs")
	if err != nil {
		t.Fatal(err)
	}
	fsys := os.DirFS(dir)
	got, err := FindUSBIn(fsys, "0483", "374B", "0670ff504955857567183619")
	if err != nil || got != "/dev/ttyACM1" {
		t.Errorf("FindUSBIn by serial = %q, %v; want /dev/ttyACM1", got, err)
	}
	_, err = FindUSBIn(fsys, "0483", "374b", "")
	want := `find serial port USB 0483:374b: 2 match (matching: /dev/ttyACM0 0483:374b serial "066DFF485671664867084531" "STM32 STLink", /dev/ttyACM1 0483:374b serial "0670FF504955857567183619" "STM32 STLink"); give a serial number to choose`
	if err == nil || err.Error() != want {
		t.Errorf("FindUSBIn without serial = %v\nwant %s", err, want)
	}
}
