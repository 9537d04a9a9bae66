package cli_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hilrun/hilrun/internal/cli"
	"github.com/hilrun/hilrun/pkg/sim"
	"github.com/hilrun/hilrun/pkg/sim/jtag"
	"github.com/hilrun/hilrun/pkg/testenv"
)

// needOpenOCD skips without OpenOCD locally and fails under CI=true, where
// scripts/test has installed it.
func needOpenOCD(t *testing.T) {
	t.Helper()
	testenv.NeedTool(t, "openocd", "apt-get install openocd")
}

// jtagBoard is a virtual board with its JTAG port served, and an OpenOCD
// config file for it.
type jtagBoard struct {
	mem *sim.Memory
	cfg string
}

func startJTAGBoard(t *testing.T) *jtagBoard {
	t.Helper()
	mem := sim.NewMemory()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	srv, err := jtag.Serve(ctx, mem, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	cfg := filepath.Join(t.TempDir(), "board.cfg")
	if err := os.WriteFile(cfg, []byte(jtag.OpenOCDConfig(srv.Addr())), 0o644); err != nil {
		t.Fatal(err)
	}
	return &jtagBoard{mem: mem, cfg: cfg}
}

// openocdRunning lists OpenOCD processes whose command line mentions s.
func openocdRunning(s string) []string {
	out, _ := exec.Command("pgrep", "-af", "openocd").Output()
	var found []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, s) && !strings.Contains(l, "pgrep") {
			found = append(found, l)
		}
	}
	return found
}

// TestRunMemorySim runs the memory example against the virtual board
// through the real OpenOCD.
func TestRunMemorySim(t *testing.T) {
	needOpenOCD(t)
	var out, errOut bytes.Buffer
	junit := filepath.Join(t.TempDir(), "junit.xml")
	code := cli.Main([]string{"run", "--sim", "--json", "-", "--junit", junit, "../../sequences/sim/memory.yaml", "../../sequences/sim/seed-memory.json"}, strings.NewReader(""), &out, &errOut)
	if code != cli.ExitPassed {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errOut.String())
	}
	if strings.Contains(errOut.String(), "stand-in") {
		t.Errorf("--sim used the stand-in although openocd is installed:\n%s", errOut.String())
	}
	for _, want := range []string{`"kind": "mem_read"`, `"label": "gpio_post"`, `"values": [`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the JSON report lacks %s", want)
		}
	}
	if x, err := os.ReadFile(junit); err != nil || !regexp.MustCompile(`gpio_post at 0x[0-9a-f]{8}: 0x00000020 0x00000020`).Match(x) {
		t.Errorf("the JUnit report lacks the values read (%v)", err)
	}
}

// TestLaunchedOpenOCD lets hilrun launch OpenOCD from a probe's config,
// checks a bus fault fails the step in OpenOCD's words, and that no OpenOCD
// is left behind.
func TestLaunchedOpenOCD(t *testing.T) {
	needOpenOCD(t)
	b := startJTAGBoard(t)
	dir := t.TempDir()
	seq := writeFile(t, dir, "seq.yaml", `
probes:
  board: {launch: {config: [`+b.cfg+`]}, elf: `+mustAbs(t, "../../firmware/sim/sim.elf")+`}
steps:
  - mem_write: true
    symbol: blink
    value: 1
    verify: true
  - mem_read: 0x48000014
  - mem_read: 0x30000000
  - mem_read: 0x20000000
`)
	var out, errOut bytes.Buffer
	code := cli.Main([]string{"run", seq}, strings.NewReader(""), &out, &errOut)
	if code != cli.ExitFailed {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "Failed to read memory at 0x30000000") {
		t.Errorf("the bus fault is not reported in OpenOCD's words:\n%s", out.String())
	}
	if v, _ := b.mem.Read(sim.BlinkAddr, 32); v != 1 {
		t.Errorf("blink = %d after the write by symbol", v)
	}
	if left := openocdRunning(b.cfg); len(left) > 0 {
		t.Errorf("OpenOCD left running: %v", left)
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestOpenOCDKilled kills the OpenOCD a run is attached to between two
// reads: the second fails as a bench error (exit 3), promptly.
func TestOpenOCDKilled(t *testing.T) {
	needOpenOCD(t)
	b := startJTAGBoard(t)
	port := freePort(t)
	ocd := exec.Command("openocd", "-f", b.cfg, "-c", "telnet_port "+port)
	ocd.Env = append(os.Environ(), "HOME="+t.TempDir())
	ocd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := ocd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ocd.Process.Kill(); ocd.Wait() })
	waitFor(t, "openocd's telnet port", func() bool { return dialable("127.0.0.1:" + port) })

	seq := writeFile(t, t.TempDir(), "seq.yaml", `
steps:
  - mem_read: 0x20000000
  - delay: 1s
  - mem_read: 0x20000000
    timeout: 5s
finally:
  - delay: 1ms
`)
	go func() {
		time.Sleep(500 * time.Millisecond)
		ocd.Process.Kill()
	}()
	var out, errOut bytes.Buffer
	began := time.Now()
	code := cli.Main([]string{"run", "--openocd", "target=127.0.0.1:" + port, seq}, strings.NewReader(""), &out, &errOut)
	if code != cli.ExitInfra {
		t.Fatalf("exit %d, want 3\n%s\n%s", code, out.String(), errOut.String())
	}
	if d := time.Since(began); d > 15*time.Second {
		t.Errorf("took %s", d)
	}
	if !strings.Contains(out.String()+errOut.String(), "openocd") {
		t.Errorf("the error does not name openocd:\n%s\n%s", out.String(), errOut.String())
	}
}

// TestInterruptStopsLaunchedOpenOCD interrupts a run whose OpenOCD hilrun
// launched: finally runs and OpenOCD is gone afterwards.
func TestInterruptStopsLaunchedOpenOCD(t *testing.T) {
	needOpenOCD(t)
	b := startJTAGBoard(t)
	seq := writeFile(t, t.TempDir(), "seq.yaml", `
probes:
  board: {launch: {config: [`+b.cfg+`]}}
steps:
  - mem_write: 0x48000018
    value: 0x20
  - delay: 60s
finally:
  - mem_write: 0x48000018
    value: 0x200000
`)
	var out, errOut testenv.Buffer
	cmd := exec.Command(hilrunBinary(t), "run", seq)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the LED to come on", func() bool { return b.mem.LED() })
	cmd.Process.Signal(syscall.SIGINT)
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != cli.ExitInterrupted {
		t.Errorf("exit %d, want 130\n%s\n%s", code, out.String(), errOut.String())
	}
	if b.mem.LED() {
		t.Error("the finally step did not turn the LED off")
	}
	if left := openocdRunning(b.cfg); len(left) > 0 {
		t.Errorf("OpenOCD left running: %v", left)
	}
}

// TestSimWithoutOpenOCD runs --sim where OpenOCD is not on PATH: the
// stand-in serves the memory, and says so.
func TestSimWithoutOpenOCD(t *testing.T) {
	bin := hilrunBinary(t)
	cmd := exec.Command(bin, "run", "--sim", "../../sequences/sim/seed-memory.json")
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin))
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, out.String(), errOut.String())
	}
	if !strings.Contains(errOut.String(), "built-in stand-in") {
		t.Errorf("no note about the stand-in:\n%s", errOut.String())
	}
}
