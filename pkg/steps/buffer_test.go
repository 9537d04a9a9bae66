package steps_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/steps"
)

func TestDeviceBuffer(t *testing.T) {
	seq, err := steps.Parse("s.yaml", []byte(`
devices:
  dut: {port: /dev/ttyACM0, buffer: 4MiB}
  aux: {port: /dev/ttyUSB0, buffer: 65536}
  log: {port: /dev/ttyUSB1, buffer: 512 KiB}
  plain: /dev/ttyUSB2
steps:
  - expect: x
    to: dut
  - expect: x
    to: aux
  - expect: x
    to: log
  - expect: x
    to: plain
`), steps.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int{"dut": 4 << 20, "aux": 64 << 10, "log": 512 << 10, "plain": 0} {
		if got := seq.Device(name).Buffer; got != want {
			t.Errorf("device %s buffer = %d, want %d", name, got, want)
		}
	}

	// A bench file sets it too, over the sequence's.
	bench := filepath.Join(t.TempDir(), steps.BenchFile)
	if err := os.WriteFile(bench, []byte("devices:\n  dut: {port: /dev/ttyACM3, buffer: 16MiB}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := steps.LoadBench(files.Anywhere(), bench)
	if err != nil {
		t.Fatal(err)
	}
	if seq, err = steps.Bind(seq, steps.Binding{Bench: b}); err != nil {
		t.Fatal(err)
	}
	if got := seq.Device("dut").Buffer; got != 16<<20 {
		t.Errorf("dut buffer after the bench file = %d, want %d", got, 16<<20)
	}
}

func TestDeviceBufferRefused(t *testing.T) {
	for name, value := range map[string]string{
		"too small": "4KiB", "too large": "1024MiB", "unknown unit": "4MB", "negative": "-1", "a list": "[1]",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := steps.Parse("s.yaml", []byte("devices:\n  dut: {port: /dev/ttyACM0, buffer: "+value+"}\nsteps:\n  - expect: x\n"), steps.LoadOptions{})
			if err == nil {
				t.Fatalf("buffer: %s accepted", value)
			}
		})
	}
}
