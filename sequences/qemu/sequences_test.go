// Package qemuseq runs the sequences of sequences/qemu against hilrun's
// QEMU firmware under the real qemu-system-arm.
package qemuseq

import (
	"bytes"
	"debug/elf"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/internal/cli"
	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/qemu"
	"github.com/hilrun/hilrun/pkg/qemu/qemutest"
	"github.com/hilrun/hilrun/pkg/steps"
)

// The serial sequences pass, their console bound with --port: firmware.yaml
// against the firmware, uboot.yaml against U-Boot. (memory_test.go runs the
// -memory sequences through QEMU's GDB server.)
func TestSerialSequences(t *testing.T) {
	for _, tc := range []struct {
		file, name string
		start      func(testing.TB) *qemu.Instance
	}{
		{"firmware.yaml", "qemu-firmware", qemutest.StartFirmware},
		{"uboot.yaml", "qemu-uboot", qemutest.StartUBoot},
	} {
		t.Run(tc.file, func(t *testing.T) {
			in := tc.start(t)
			var out, errOut bytes.Buffer
			code := cli.Main([]string{"run", "--port", "console=" + in.ConsolePath(), tc.file}, strings.NewReader(""), &out, &errOut)
			if code != 0 {
				t.Fatalf("hilrun run: exit %d\n%s\n%s", code, out.String(), errOut.String())
			}
			if !strings.Contains(out.String(), "PASSED "+tc.name+":") {
				t.Errorf("output lacks the verdict:\n%s", out.String())
			}
		})
	}
}

// Every symbol firmware-memory.yaml names is in the firmware's ELF, so that
// a symbol renamed in the firmware is named here, not as a failed step.
func TestMemorySequenceSymbols(t *testing.T) {
	f, err := elf.Open(qemutest.Firmware(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, s := range syms {
		have[s.Name] = true
	}
	seq, err := os.ReadFile("firmware-memory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	named := regexp.MustCompile(`(?m)^\s*symbol: (\w+)\s*$`).FindAllStringSubmatch(string(seq), -1)
	if len(named) < 5 {
		t.Fatalf("found only %d symbol: lines", len(named))
	}
	for _, m := range named {
		if !have[m[1]] {
			t.Errorf("firmware-memory.yaml names symbol %s, which the ELF lacks", m[1])
		}
	}
}

// uboot.yaml leaves waiting for U-Boot's prompt to the console's prompt:
// not one hand-written expect of the prompt between commands.
func TestUBootSequenceLeavesThePromptToTheDevice(t *testing.T) {
	seq, err := steps.Load(files.Anywhere(), "uboot.yaml", steps.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dev := seq.Device(steps.DefaultDevice)
	if dev == nil || dev.Prompt == nil || dev.Prompt.Text.Raw != "=> " || !dev.Echo {
		t.Fatalf("device console: want prompt \"=> \" and echo: true, found %+v", dev)
	}
	steps.Walk(seq, func(s *steps.Step) {
		for _, p := range s.Expect {
			if strings.TrimSpace(p.Text.Raw) == "=>" {
				t.Errorf("%s: an expect of the prompt %q", p.Pos, p.Text.Raw)
			}
		}
	})
}
