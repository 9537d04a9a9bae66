package cli_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/internal/cli"
	"github.com/hilrun/hilrun/pkg/testenv"
)

// TestBuildAndLoad builds the virtual board's firmware with the real ARM
// toolchain in a build step, checks its size through the step's data,
// loads the image into the board's RAM through the real OpenOCD, reads it
// back, and classifies a broken build.
func TestBuildAndLoad(t *testing.T) {
	needOpenOCD(t)
	testenv.NeedTool(t, "arm-none-eabi-gcc", "apt-get install gcc-arm-none-eabi")
	fw := mustAbs(t, "../../firmware/sim")
	out := t.TempDir()
	seq := writeFile(t, t.TempDir(), "seq.yaml", `
name: build-and-load
steps:
  - id: fw
    build:
      command: [make, -s, -C, `+fw+`, BUILD=`+out+`/ok]
      elf: `+out+`/ok/sim.elf
  - assert: steps.fw.flash_bytes == 564 && steps.fw.ram_bytes == 2096
  - upload:
      openocd: {file: `+out+`/ok/sim.bin, method: load, offset: 0x20008000, verify: true}
  - mem_read: 0x20008000
    count: 2
    expect: [0x20010000, 0x08000101]
  - id: broken
    build:
      command: [make, -s, -C, `+fw+`, broken-missing-header, BUILD=`+out+`/broken]
`)
	var stdout, stderr bytes.Buffer
	junit := filepath.Join(t.TempDir(), "junit.xml")
	code := cli.Main([]string{"run", "--sim", "--json", "-", "--junit", junit, seq}, strings.NewReader(""), &stdout, &stderr)
	if code != cli.ExitFailed {
		t.Fatalf("exit %d, want 1 (the broken build)\n%s\n%s", code, stdout.String(), stderr.String())
	}
	var rep struct {
		Sequences []struct {
			Steps []struct {
				Status string
				Data   map[string]any
			}
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	st := rep.Sequences[0].Steps
	for i := 0; i < 4; i++ {
		if st[i].Status != "passed" {
			t.Errorf("step %d: %s", i, st[i].Status)
		}
	}
	b := st[4]
	diag, _ := b.Data["diagnostic"].(map[string]any)
	if b.Status != "failed" || b.Data["class"] != "MissingHeader" || diag == nil || diag["line"] != float64(6) {
		t.Errorf("the broken build: status %s, data %v", b.Status, b.Data)
	}
	x, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"build: ", "0x20008000: 0x20010000 0x08000101", "hilrun_missing.h"} {
		if !strings.Contains(string(x), want) {
			t.Errorf("the JUnit report lacks %q:\n%s", want, x)
		}
	}
}
