package openocd

import (
	"context"
	"strings"
	"testing"
)

func TestParseTyped(t *testing.T) {
	for _, tc := range []struct {
		in, want string // want "" means an error
		effect   Effect
	}{
		{in: "halt", want: "halt", effect: EffectControl},
		{in: "halt 100", want: "halt 100", effect: EffectControl},
		{in: "resume", want: "resume", effect: EffectControl},
		{in: "resume 0x08000000", want: "resume 0x8000000", effect: EffectWrite},
		{in: "reset", want: "reset run", effect: EffectControl},
		{in: "reset init", want: "reset init", effect: EffectControl},
		{in: "reset now"},
		{in: "mdw 0x20000000", want: "mdw 0x20000000", effect: EffectRead},
		{in: "mdd phys 16 2", want: "mdd phys 0x10 2", effect: EffectRead},
		{in: "mwh 0x20000000 0xffff 4", want: "mwh 0x20000000 0xffff 4", effect: EffectWrite},
		{in: "mwh 0x20000000 0x10000"},
		{in: "mwd 0 0xffffffffffffffff", want: "mwd 0x0 0xffffffffffffffff", effect: EffectWrite},
		{in: "mdw 0xfffffffc 1", want: "mdw 0xfffffffc 1", effect: EffectRead},
		{in: "mdd 0xfffffffffffffff8 1", want: "mdd 0xfffffffffffffff8 1", effect: EffectRead},
		{in: "mdd 0xfffffffffffffff8 2"},
		{in: "mdw 0 0"},
		{in: "read_memory 0x20000000 16 3", want: "read_memory 0x20000000 16 3", effect: EffectRead},
		{in: "read_memory 0x20000000 12 3"},
		{in: "reg", want: "reg", effect: EffectRead},
		{in: "reg pc", want: "reg pc", effect: EffectRead},
		{in: "reg r0 7", want: "reg r0 0x7", effect: EffectWrite},
		{in: "targets", want: "targets", effect: EffectInfo},
		{in: "targets other"},
		{in: "poll on"},
		{in: "mdw 0x20000000 -1"},
		{in: "mdw 0x2000_0000", want: "mdw 0x20000000", effect: EffectRead},
		{in: "mdw 1e3"},
		{in: "echo hi"},
		{in: "mdw [exec id]"},
		{in: "mdw {0}"},
		{in: "mdw $a"},
		{in: `mdw "0"`},
		{in: "mdw 0;"},
		{in: ""},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseTyped(tc.in)
			if tc.want == "" {
				if err == nil {
					t.Errorf("ParseTyped(%q) = %q, want an error", tc.in, got)
				}
				return
			}
			if err != nil || got.String() != tc.want || got.Effect() != tc.effect {
				t.Errorf("ParseTyped(%q) = %q (effect %d), %v; want %q (effect %d)", tc.in, got, got.Effect(), err, tc.want, tc.effect)
			}
		})
	}
}

// A name that would close the braces OpenOCD's program procedure puts
// around it never reaches OpenOCD.
func TestProgramRefusesBraces(t *testing.T) {
	s := &Session{}
	for _, name := range []string{"fw}.bin", "fw{.bin", `fw\.bin`, "fw\n.bin"} {
		_, err := s.Program(context.Background(), name, false, false, 0)
		if err == nil || !strings.Contains(err.Error(), "rename the file") {
			t.Errorf("Program(%q) = %v, want a refusal", name, err)
		}
	}
}
