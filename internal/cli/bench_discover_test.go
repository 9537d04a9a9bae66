package cli_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/usbsys/usbsystest"
)

var updateDiscover = flag.Bool("update-discover", false, "rewrite testdata/discover's golden files")

// recorded are the recorded sysfs trees of pkg/usbsys, and the bench
// files it writes for them.
const recorded = "../../pkg/usbsys/testdata"

// buildTree makes the recorded sysfs tree layout in a temporary folder.
func buildTree(t *testing.T, layout string) string {
	t.Helper()
	dir, err := usbsystest.BuildFile(t.TempDir(), filepath.Join(recorded, layout+".sysfs"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestBenchDiscover: on each recorded tree, bench discover prints the
// boards its golden file holds and writes the bench file pkg/usbsys's
// golden file holds, which hilrun validate takes as a bench file.
func TestBenchDiscover(t *testing.T) {
	for _, layout := range []string{"nucleo", "ftdi-jlink-hub", "two-nucleos-hub", "bmp-debugprobe"} {
		t.Run(layout, func(t *testing.T) {
			sysfs := buildTree(t, layout)
			bench := filepath.Join(t.TempDir(), "hilrun.bench.yaml")
			code, out, errOut := hilrun("bench", "discover", "--sysfs", sysfs, "--write", bench)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			out = strings.ReplaceAll(out, bench, "$BENCH")
			golden := filepath.Join("testdata", "discover", layout+".txt")
			if *updateDiscover {
				if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test -run TestBenchDiscover -update-discover writes it)", err)
			}
			if out != string(want) {
				t.Errorf("output differs from %s:\n%s", golden, out)
			}
			got, err := os.ReadFile(bench)
			if err != nil {
				t.Fatal(err)
			}
			wantBench, err := os.ReadFile(filepath.Join(recorded, "golden", layout+".bench.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, wantBench) {
				t.Errorf("the bench file differs from pkg/usbsys's golden one:\n%s", got)
			}
			if code, out, errOut := hilrun("validate", bench); code != 0 || !strings.Contains(out, "ok (bench:") {
				t.Errorf("hilrun validate on the bench file: exit %d\n%s%s", code, out, errOut)
			}
		})
	}
}

func TestBenchDiscoverErrors(t *testing.T) {
	nucleo := buildTree(t, "nucleo")
	existing := filepath.Join(t.TempDir(), "hilrun.bench.yaml")
	if err := os.WriteFile(existing, []byte("devices: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no sysfs", []string{"--sysfs", filepath.Join(empty, "missing")}, 2, "--sysfs " + filepath.Join(empty, "missing")},
		{"file exists", []string{"--sysfs", nucleo, "--write", existing}, 2, "the file exists; give --force to replace it"},
		{"nothing found", []string{"--sysfs", empty}, 0, "no USB serial consoles or debug probes under " + empty},
		{"nothing to write", []string{"--sysfs", empty, "--write", filepath.Join(empty, "b.yaml")}, 3, "nothing to write"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := hilrun(append([]string{"bench", "discover"}, tt.args...)...)
			if code != tt.code || !strings.Contains(errOut, tt.msg) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, errOut, tt.code, tt.msg)
			}
		})
	}
	// --force replaces the file.
	if code, _, errOut := hilrun("bench", "discover", "--sysfs", nucleo, "--write", existing, "--force"); code != 0 {
		t.Fatalf("--force: exit %d: %s", code, errOut)
	}
	if b, _ := os.ReadFile(existing); !bytes.Contains(b, []byte("interface/stlink.cfg")) {
		t.Errorf("--force left %q", b)
	}
}
