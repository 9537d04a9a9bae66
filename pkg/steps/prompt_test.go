package steps_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/steps"
)

func TestPromptAndEcho(t *testing.T) {
	seq, err := steps.Parse("p.yaml", []byte(`
devices:
  uboot: {port: /dev/ttyUSB0, prompt: "=> ", echo: true}
  shell: {port: /dev/ttyACM0, prompt: {regex: '[#$] $'}}
  plain: /dev/ttyACM1
steps:
  - send: version
    to: uboot
    wait_prompt: false
    expect: U-Boot
    until_prompt: false
  - send: ls
    to: shell
  - expect: x
    to: uboot
    until_prompt: true
`), steps.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ub, sh, pl := seq.Device("uboot"), seq.Device("shell"), seq.Device("plain")
	if ub.Prompt == nil || ub.Prompt.Regex || ub.Prompt.Text.Raw != "=> " || !ub.Echo {
		t.Errorf("uboot: prompt %v, echo %v; want literal \"=> \" and echo", ub.Prompt, ub.Echo)
	}
	if sh.Prompt == nil || !sh.Prompt.Regex || sh.Echo {
		t.Errorf("shell: prompt %v, echo %v; want a regexp and no echo", sh.Prompt, sh.Echo)
	}
	if pl.Prompt != nil || pl.Echo {
		t.Errorf("plain: prompt %v, echo %v; want neither", pl.Prompt, pl.Echo)
	}
	s0, s1, s2 := seq.Steps[0], seq.Steps[1], seq.Steps[2]
	if s0.WaitPrompt == nil || *s0.WaitPrompt || s0.UntilPrompt == nil || *s0.UntilPrompt {
		t.Errorf("step 0: wait_prompt %v, until_prompt %v; want both false", s0.WaitPrompt, s0.UntilPrompt)
	}
	if s1.WaitPrompt != nil || s1.UntilPrompt != nil {
		t.Errorf("step 1: wait_prompt %v, until_prompt %v; want both unset", s1.WaitPrompt, s1.UntilPrompt)
	}
	if s2.UntilPrompt == nil || !*s2.UntilPrompt {
		t.Errorf("step 2: until_prompt %v, want true", s2.UntilPrompt)
	}
}

// A bench file's device entry sets the prompt and echo of a sequence's
// device that has none.
func TestBenchPrompt(t *testing.T) {
	dir := t.TempDir()
	bench := filepath.Join(dir, "hilrun.bench.yaml")
	if err := os.WriteFile(bench, []byte("devices:\n  console: {port: /dev/ttyUSB0, prompt: {regex: '=> $'}, echo: true}\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	b, err := steps.LoadBench(files.Anywhere(), bench)
	if err != nil {
		t.Fatal(err)
	}
	seq, err := steps.Parse("s.yaml", []byte("steps:\n  - send: version\n"), steps.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	seq, err = steps.Bind(seq, steps.Binding{Bench: b})
	if err != nil {
		t.Fatal(err)
	}
	d := seq.Device(steps.DefaultDevice)
	if d.Prompt == nil || !d.Prompt.Regex || d.Prompt.Text.Raw != "=> $" || !d.Echo {
		t.Errorf("bound device: prompt %v, echo %v; want /=> $/ and echo", d.Prompt, d.Echo)
	}
}
