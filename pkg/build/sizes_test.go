package build

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/hilrun/hilrun/pkg/testenv"
)

const simELF = "../../firmware/sim/sim.elf"

// needTool skips without the tool locally and fails under CI=true, where
// a skip would hide a broken setup.
func needTool(t *testing.T, name string) {
	t.Helper()
	testenv.NeedTool(t, name, "apt-get install gcc-arm-none-eabi make")
}

// gnuSize runs arm-none-eabi-size on path and parses its Berkeley table.
func gnuSize(t *testing.T, path string) Sizes {
	t.Helper()
	needTool(t, "arm-none-eabi-size")
	out, err := exec.Command("arm-none-eabi-size", path).CombinedOutput()
	if err != nil {
		t.Fatalf("arm-none-eabi-size %s: %v\n%s", path, err, out)
	}
	s, ok := ParseSizes(string(out))
	if !ok {
		t.Fatalf("no sizes in arm-none-eabi-size output:\n%s", out)
	}
	return s
}

func TestELFSizes(t *testing.T) {
	got, err := ELFSizes(simELF)
	if err != nil {
		t.Fatal(err)
	}
	// Recorded from Debian's binutils 2.40 arm-none-eabi-size.
	want := Sizes{Text: 540, Data: 24, BSS: 2072, FlashBytes: 564, RAMBytes: 2096, ELF: simELF}
	if got != want {
		t.Errorf("ELFSizes = %+v, want %+v", got, want)
	}
	t.Run("agrees with arm-none-eabi-size", func(t *testing.T) {
		gs := gnuSize(t, simELF)
		if got.Text != gs.Text || got.Data != gs.Data || got.BSS != gs.BSS {
			t.Errorf("ELFSizes text/data/bss = %d/%d/%d, arm-none-eabi-size says %d/%d/%d",
				got.Text, got.Data, got.BSS, gs.Text, gs.Data, gs.BSS)
		}
	})
}

func TestELFSizesErrors(t *testing.T) {
	dir := t.TempDir()
	notELF := filepath.Join(dir, "fw.elf")
	if err := os.WriteFile(notELF, []byte("not an elf"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
	}{
		{"missing", filepath.Join(dir, "missing.elf")},
		{"not elf", notELF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := ELFSizes(tt.path); err == nil {
				t.Fatal("ELFSizes succeeded, want an error")
			}
		})
	}
}

func TestParseSizes(t *testing.T) {
	tests := []struct {
		name   string
		output string
		want   Sizes
		ok     bool
	}{
		{
			name: "platformio summary",
			output: "Checking size .pio/build/esp32dev/firmware.elf\n" +
				"RAM:   [=         ]   6.5% (used 21312 bytes from 327680 bytes)\n" +
				"Flash: [===       ]  25.1% (used 329301 bytes from 1310720 bytes)\n",
			want: Sizes{RAMBytes: 21312, RAMTotal: 327680, RAMPercent: 6.5, FlashBytes: 329301, FlashTotal: 1310720, FlashPercent: 25.1, fromPIO: true},
			ok:   true,
		},
		{
			name:   "platformio over capacity",
			output: "RAM:   [==========]  105.3% (used 2157 bytes from 2048 bytes)\r\n",
			want:   Sizes{RAMBytes: 2157, RAMTotal: 2048, RAMPercent: 105.3, fromPIO: true},
			ok:     true,
		},
		{
			name:   "berkeley",
			output: "   text\t   data\t    bss\t    dec\t    hex\tfilename\n    540\t     24\t   2072\t   2636\t    a4c\tbuild/sim.elf\n",
			want:   Sizes{Text: 540, Data: 24, BSS: 2072, FlashBytes: 564, RAMBytes: 2096},
			ok:     true,
		},
		{
			name: "berkeley last image counts",
			output: "   text\t   data\t    bss\t    dec\t    hex\tfilename\n      1\t      2\t      3\t      6\t      6\ta.elf\n" +
				"   text\t   data\t    bss\t    dec\t    hex\tfilename\n     10\t     20\t     30\t     60\t     3c\tb.elf\n",
			want: Sizes{Text: 10, Data: 20, BSS: 30, FlashBytes: 30, RAMBytes: 50},
			ok:   true,
		},
		{
			name:   "header without row",
			output: "   text\t   data\t    bss\t    dec\t    hex\tfilename\nsize: 'x.elf': No such file\n",
			ok:     false,
		},
		{
			name:   "nothing",
			output: "Compiling main.o\n",
			ok:     false,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ParseSizes(tt.output)
			if ok != tt.ok || got != tt.want {
				t.Errorf("ParseSizes = %+v, %v, want %+v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestWithELF(t *testing.T) {
	elfSizes := Sizes{Text: 100, Data: 10, BSS: 5, FlashBytes: 110, RAMBytes: 15, ELF: "fw.elf"}
	tests := []struct {
		name string
		from Sizes
		want Sizes
	}{
		{
			name: "platformio figures kept",
			from: Sizes{FlashBytes: 329301, FlashTotal: 1310720, FlashPercent: 25.1, RAMBytes: 21312, RAMTotal: 327680, RAMPercent: 6.5, fromPIO: true},
			want: Sizes{Text: 100, Data: 10, BSS: 5, FlashBytes: 329301, FlashTotal: 1310720, FlashPercent: 25.1, RAMBytes: 21312, RAMTotal: 327680, RAMPercent: 6.5, ELF: "fw.elf", fromPIO: true},
		},
		{
			name: "elf replaces berkeley output",
			from: Sizes{Text: 1, Data: 2, BSS: 3, FlashBytes: 3, RAMBytes: 5},
			want: elfSizes,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.from.WithELF(elfSizes); got != tt.want {
				t.Errorf("WithELF = %+v, want %+v", got, tt.want)
			}
		})
	}
}
