package steps_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/steps"
)

// writeFile writes text to name in dir and returns its path.
func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLadderLoads: health: and recover: become sequences over the bench's
// devices, probes and power entries, each keeping only what its steps use.
func TestLadderLoads(t *testing.T) {
	path := writeFile(t, t.TempDir(), "hilrun.bench.yaml", `
devices:
  dut: /dev/ttyACM0
  modem: /dev/ttyUSB1
probes:
  swd: {openocd: "127.0.0.1:4444"}
power:
  dut: {cycle: [./relay.sh, cycle]}
health:
  - send: ""
    to: dut
    expect: "$ "
recover:
  - reset: run
  - power: {device: dut, action: cycle}
  - group: both
    steps:
      - send: reboot
        to: modem
      - delay: 1s
`)
	b, err := steps.LoadBench(files.Anywhere(), path)
	if err != nil {
		t.Fatal(err)
	}
	l := b.Ladder
	if l == nil || l.Health == nil || len(l.Rungs) != 3 {
		t.Fatalf("ladder = %+v, want a health check and 3 rungs", l)
	}
	names := func(seq *steps.Sequence) string {
		var out []string
		for _, d := range seq.Devices {
			out = append(out, "device "+d.Name)
		}
		for _, p := range seq.Probes {
			out = append(out, "probe "+p.Name)
		}
		return strings.Join(out, ", ")
	}
	for _, tc := range []struct {
		seq        *steps.Sequence
		label, use string
	}{
		{l.Health, "", "device dut"},
		{l.Rungs[0].Seq, "reset run", "probe swd"},
		{l.Rungs[1].Seq, "power cycle dut", ""},
		{l.Rungs[2].Seq, "group both", "device modem"},
	} {
		if got := names(tc.seq); got != tc.use {
			t.Errorf("%s uses %q, want %q", tc.seq.Name, got, tc.use)
		}
	}
	for i, want := range []string{"reset run", "power cycle dut", "group both"} {
		if got := l.Rungs[i].Label(); got != want {
			t.Errorf("rung %d label = %q, want %q", i+1, got, want)
		}
	}
	if got := l.Rungs[1].String(); got != "rung 2 (power cycle dut)" {
		t.Errorf("rung 2 = %q", got)
	}
	if got := l.Rungs[0].Seq.Probes[0].OpenOCD; got != "127.0.0.1:4444" {
		t.Errorf("rung 1's probe is bound to %q, want the bench's", got)
	}
}

// TestLadderErrors: a ladder that could not run is refused where it is
// written, as FILE:LINE:COL.
func TestLadderErrors(t *testing.T) {
	for _, tc := range []struct {
		name, text, want string
	}{
		{"recover without health", "devices: {dut: /dev/x}\nrecover:\n  - reset: run\n",
			":3:3: recover: needs a health: check"},
		{"health not a list", "devices: {dut: /dev/x}\nhealth: {send: x}\n",
			":2:9: health must be a list of steps"},
		{"empty recover", "devices: {dut: /dev/x}\nhealth: [{send: x}]\nrecover: []\n",
			":3:10: recover must be a list of steps to try in order"},
		{"empty health", "devices: {dut: /dev/x}\nhealth: []\n",
			":2:9: health must be a list of steps that pass when the board answers, such as [{send: \"\", expect: \"$ \"}], found an empty list"},
		{"a secret in a health check's pattern", "devices: {dut: /dev/x}\nsecrets: {psk: env:PSK}\nhealth:\n  - send: x\n    expect: ${psk}\n",
			`:5:13: secret psk can only be sent`},
		{"a secret of no bench", "devices: {dut: /dev/x}\nhealth:\n  - send: ${psk}\n",
			`:3:5: variable "psk" is not defined here`},
		{"a recover nested in health", "devices: {dut: /dev/x}\nhealth:\n  - send: x\n    recover: [{send: y}]\n",
			`:4:5: unknown key "recover" in a send step`},
		{"unknown device", "devices: {dut: /dev/x}\nhealth:\n  - send: x\n    to: dutt\n",
			`:3:5: to: unknown device "dutt"`},
		{"several devices", "devices: {a: /dev/x, b: /dev/y}\nhealth:\n  - send: x\n",
			":3:5: this send step needs to: because the sequence has several devices (a, b)"},
		{"power without an entry", "devices: {dut: /dev/x}\nhealth: [{send: x}]\nrecover:\n  - power: cycle\n",
			`:4:5: power: no power entry for "dut"`},
		{"bad step", "devices: {dut: /dev/x}\nhealth: [{send: x}]\nrecover:\n  - sned: x\n",
			":4:5: "},
		{"undefined variable", "devices: {dut: /dev/x}\nhealth:\n  - send: ${nope}\n",
			`:3:5: variable "nope" is not defined here`},
		{"too many rungs", "devices: {dut: /dev/x}\nhealth: [{send: x}]\nrecover: [" + strings.Repeat("{delay: 1ms}, ", 16) + "{delay: 1ms}]\n",
			":3:10: recover: a ladder has at most 16 rungs, found 17"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, t.TempDir(), "x.bench.yaml", tc.text)
			_, err := steps.LoadBench(files.Anywhere(), path)
			if err == nil {
				t.Fatal("loaded")
			}
			if _, ok := err.(steps.ErrorList); !ok {
				t.Errorf("error %v is not an ErrorList", err)
			}
			if !strings.Contains(err.Error(), path+tc.want) {
				t.Errorf("error\n%v\ndoes not say %s%s", err, path, tc.want)
			}
		})
	}
}

// TestLadderSecrets: a ladder's steps may send the bench's secrets; each
// of its sequences declares those it sends, and no other, so that a run
// reads only what the ladder needs.
func TestLadderSecrets(t *testing.T) {
	path := writeFile(t, t.TempDir(), "hilrun.bench.yaml", `
devices:
  dut: /dev/ttyACM0
secrets:
  psk: env:WIFI_PSK
  token: file:token.txt
  unused: env:NOT_SENT
health:
  - send: "login ${psk}"
    expect: "$ "
recover:
  - exec: [./relay.sh, "${token}"]
  - reset: run
`)
	b, err := steps.LoadBench(files.Anywhere(), path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		seq  *steps.Sequence
		want string
	}{
		{b.Ladder.Health, "psk"},
		{b.Ladder.Rungs[0].Seq, "token"},
		{b.Ladder.Rungs[1].Seq, ""},
	} {
		if got := strings.Join(steps.SecretNames(tc.seq), ","); got != tc.want {
			t.Errorf("%s declares secrets %q, want %q", tc.seq.Name, got, tc.want)
		}
	}
	if s := b.Ladder.Health.Secrets; len(s) == 1 && s[0].Pos.Line != 5 {
		t.Errorf("the health check's secret psk is at %s, want the bench file's line 5, where its source is", s[0].Pos)
	}
}

// TestPoolLadders: a pool's inline benches and virtual boards carry their
// own ladders; a bench file's is in the file, never beside its name.
func TestPoolLadders(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "left.bench.yaml", "devices: {console: /dev/ttyACM0}\nhealth: [{send: version, expect: v1}]\n")
	path := writeFile(t, dir, "lab.pool.yaml", `benches:
  - name: left
    bench: left.bench.yaml
  - name: sim1
    sim: true
    health: [{send: echo alive, expect: alive}]
    recover: [{reset: run}]
  - name: inline
    devices: {console: /dev/ttyACM1}
    health: [{send: version, expect: v1}]
  - name: plain
    sim: true
`)
	pool, err := steps.LoadPool(files.Anywhere(), path)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"health", "health+1", "health", ""} {
		l := pool.Benches[i].Ladder
		got := ""
		if l != nil {
			got = "health"
			if len(l.Rungs) > 0 {
				got += "+1"
			}
		}
		if got != want {
			t.Errorf("bench %s ladder = %q, want %q", pool.Benches[i].Name, got, want)
		}
	}
	sim := pool.Benches[1].Ladder
	if d := sim.Health.Devices; len(d) != 1 || d[0].Name != steps.DefaultDevice || d[0].Port != "" {
		t.Errorf("the virtual board's health check has devices %+v, want one unbound %s", d, steps.DefaultDevice)
	}
	if p := sim.Rungs[0].Seq.Probes; len(p) != 1 || p[0].Backend() != "" {
		t.Errorf("the virtual board's reset rung has probes %+v, want one unbound", p)
	}

	bad := writeFile(t, dir, "bad.pool.yaml", "benches:\n  - name: left\n    bench: left.bench.yaml\n    recover: [{reset: run}]\n")
	_, err = steps.LoadPool(files.Anywhere(), bad)
	if err == nil || !strings.Contains(err.Error(), bad+":4:5: bench left: recover: goes in the bench file left.bench.yaml") {
		t.Errorf("a ladder beside a bench file's name: %v", err)
	}
}
