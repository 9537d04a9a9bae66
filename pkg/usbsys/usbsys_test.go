package usbsys_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/steps"
	"github.com/hilrun/hilrun/pkg/usbsys"
	"github.com/hilrun/hilrun/pkg/usbsys/usbsystest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// layouts are the recorded trees in testdata.
var layouts = []string{"nucleo", "ftdi-jlink-hub", "two-nucleos-hub", "bmp-debugprobe"}

func scan(t *testing.T, layout string) *usbsys.Tree {
	t.Helper()
	dir, err := usbsystest.BuildFile(t.TempDir(), filepath.Join("testdata", layout+".sysfs"))
	if err != nil {
		t.Fatal(err)
	}
	tree, err := usbsys.Scan(os.DirFS(dir))
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	return tree
}

func TestScan(t *testing.T) {
	tree := scan(t, "nucleo")
	var names []string
	for _, d := range tree.Devices {
		names = append(names, d.Name)
	}
	if want := []string{"usb1", "1-1"}; !slices.Equal(names, want) {
		t.Fatalf("devices %v, want %v", names, want)
	}
	d := tree.Device("1-1")
	if d.VID != "0483" || d.PID != "374b" || d.Serial != "0671FF485550755187121726" || d.Product != "STM32 STLink" || d.Parent != "usb1" {
		t.Errorf("1-1 = %+v", d)
	}
	if !tree.Device("usb1").IsRootHub() || !tree.Device("usb1").IsHub() {
		t.Error("usb1 is not a root hub")
	}
	if len(d.Interfaces) != 4 {
		t.Fatalf("1-1 has %d interfaces, want 4", len(d.Interfaces))
	}
	ttys := tree.TTYs()
	if len(ttys) != 1 || ttys[0].Name != "ttyACM0" || ttys[0].Interface.Number != 1 || ttys[0].Device != d {
		t.Errorf("ttys %+v, want ttyACM0 on interface 1 of 1-1 (ttyS0 and tty0 are not USB)", ttys)
	}
}

// A USB serial converter's tty sits one folder deeper than a CDC ACM
// one: .../1-2.1:1.0/ttyUSB0/tty/ttyUSB0.
func TestScanUSBSerial(t *testing.T) {
	tree := scan(t, "ftdi-jlink-hub")
	ttys := tree.TTYs()
	if len(ttys) != 1 || ttys[0].Name != "ttyUSB0" || ttys[0].Device.Name != "1-2.1" || ttys[0].Device.Parent != "1-2" {
		t.Errorf("ttys %+v, want ttyUSB0 on 1-2.1 behind 1-2", ttys)
	}
}

func TestScanEmptyTree(t *testing.T) {
	tree, err := usbsys.Scan(os.DirFS(t.TempDir()))
	if err != nil || len(tree.Devices) != 0 {
		t.Errorf("Scan of an empty tree = %+v, %v; want no devices", tree, err)
	}
}

func TestScanLinkOutOfTree(t *testing.T) {
	dir, err := usbsystest.Build(t.TempDir(), []byte("bus/usb/devices/1-1 -> ../../../../etc\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = usbsys.Scan(os.DirFS(dir))
	if err == nil || !strings.Contains(err.Error(), "out of the tree") {
		t.Errorf("Scan = %v, want an error saying the link leads out of the tree", err)
	}
}

// summary is a board as the tests compare it: its devices, consoles and
// probes by name.
func summary(b usbsys.Board) string {
	var parts []string
	for _, d := range b.Devices {
		parts = append(parts, d.Name)
	}
	for _, c := range b.Consoles {
		parts = append(parts, c.Name)
	}
	for _, p := range b.Probes {
		parts = append(parts, string(p.Kind))
	}
	return b.Name + ": " + strings.Join(parts, " ")
}

func TestBoards(t *testing.T) {
	tests := []struct {
		layout string
		want   []string
		reason []string // a word of each board's reason
	}{
		{"nucleo", []string{"board1: 1-1 ttyACM0 ST-Link"}, []string{"one USB device, 1-1"}},
		{"ftdi-jlink-hub", []string{"board1: 1-2.1 1-2.2 ttyUSB0 J-Link"}, []string{"the only devices behind hub 1-2"}},
		{
			"two-nucleos-hub",
			[]string{"board1: 1-3.1 ttyACM0 ST-Link", "board2: 1-3.2 ttyACM1 ST-Link"},
			[]string{"one USB device, 1-3.1", "one USB device, 1-3.2"},
		},
		{
			"bmp-debugprobe",
			[]string{"board1: 1-1 ttyACM1 Black Magic Probe", "board2: 1-4 ttyACM2 CMSIS-DAP", "board3: 1-5 ttyUSB0"},
			[]string{"one USB device, 1-1", "one USB device, 1-4", "a console with no probe"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.layout, func(t *testing.T) {
			boards := usbsys.Boards(scan(t, tt.layout))
			var got []string
			for i, b := range boards {
				got = append(got, summary(b))
				if i < len(tt.reason) && !strings.Contains(b.Reason, tt.reason[i]) {
					t.Errorf("%s: reason %q, want it to say %q", b.Name, b.Reason, tt.reason[i])
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("boards\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// Two of one product behind a hub are two boards, not one.
func TestBoardsIdenticalBehindHub(t *testing.T) {
	tree := &usbsys.Tree{Devices: []*usbsys.Device{
		{Name: "1-1", Parent: "usb1", Class: "09", VID: "05e3", PID: "0608"},
		cp2102("1-1.1", "A"), cp2102("1-1.2", "B"),
		{Name: "1-1.3", Parent: "1-1", VID: "1366", PID: "0101"},
	}}
	boards := usbsys.Boards(tree)
	if len(boards) != 3 {
		var got []string
		for _, b := range boards {
			got = append(got, summary(b))
		}
		t.Errorf("boards %v, want each device a board of its own", got)
	}
}

func cp2102(name, serial string) *usbsys.Device {
	d := &usbsys.Device{Name: name, Parent: "1-1", VID: "10c4", PID: "ea60", Serial: serial}
	d.Interfaces = []*usbsys.Interface{{Number: 0, TTYs: []string{"ttyUSB" + serial}}}
	return d
}

func TestCompare(t *testing.T) {
	names := []string{"1-10", "1-2.10", "usb1", "1-2.1", "2-1", "1-2"}
	slices.SortFunc(names, usbsys.Compare)
	want := []string{"usb1", "1-2", "1-2.1", "1-2.10", "1-10", "2-1"}
	if !slices.Equal(names, want) {
		t.Errorf("sorted %v, want %v", names, want)
	}
}

func TestByID(t *testing.T) {
	d := &usbsys.Device{Name: "1-1", VID: "0403", PID: "6001", Manufacturer: "FTDI", Product: " FT232R USB  UART ", Serial: "A10K"}
	in := &usbsys.Interface{Number: 0}
	if got, want := usbsys.ByID(usbsys.TTY{Name: "ttyUSB0", Device: d, Interface: in}), "/dev/serial/by-id/usb-FTDI_FT232R_USB_UART_A10K-if00-port0"; got != want {
		t.Errorf("ByID = %s, want %s", got, want)
	}
	d = &usbsys.Device{Name: "1-1", VID: "1a86", PID: "7523", Manufacturer: "VIA Labs, Inc."}
	if got, want := usbsys.ByID(usbsys.TTY{Name: "ttyACM0", Device: d, Interface: &usbsys.Interface{Number: 2}}), "/dev/serial/by-id/usb-VIA_Labs__Inc._7523-if02"; got != want {
		t.Errorf("ByID = %s, want %s", got, want)
	}
}

// The bench file of each layout matches its golden file and loads as a
// bench file, with a device per console and a probe per probe.
func TestWriteBench(t *testing.T) {
	for _, layout := range layouts {
		t.Run(layout, func(t *testing.T) {
			boards := usbsys.Boards(scan(t, layout))
			var buf bytes.Buffer
			if err := usbsys.WriteBench(&buf, boards); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "golden", layout+".bench.yaml")
			if *update {
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to write it)", err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				t.Errorf("bench file differs from %s (go test -update rewrites it):\n%s", golden, buf.Bytes())
			}
			b, err := steps.LoadBench(files.Anywhere(), golden)
			if err != nil {
				t.Fatalf("the bench file does not load: %v", err)
			}
			consoles, probes := 0, 0
			for _, bd := range boards {
				consoles += len(bd.Consoles)
				probes += len(bd.Probes)
			}
			if len(b.Devices) != consoles || len(b.Probes) != probes {
				t.Errorf("bench has %d devices and %d probes, want %d and %d", len(b.Devices), len(b.Probes), consoles, probes)
			}
		})
	}
}
