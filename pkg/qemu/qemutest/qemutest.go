// Package qemutest helps tests run hilrun's QEMU firmware (firmware/qemu)
// and U-Boot under the real qemu-system-arm: it builds the firmware once per
// test binary, starts QEMU, opens its console and talks to its shell. What
// a test needs and cannot find (QEMU, the cross compiler, U-Boot) skips the
// test, or fails it under CI=true (see pkg/testenv).
package qemutest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/gate/devices"
	"github.com/hilrun/hilrun/pkg/gate/environ"
	"github.com/hilrun/hilrun/pkg/gate/process"
	"github.com/hilrun/hilrun/pkg/proc/tmpdir"
	"github.com/hilrun/hilrun/pkg/qemu"
	"github.com/hilrun/hilrun/pkg/serialx"
	"github.com/hilrun/hilrun/pkg/stream"
	"github.com/hilrun/hilrun/pkg/testenv"
)

// The firmware as tests see it (firmware/qemu/README.md has the rest).
const (
	// Machine is the QEMU machine the firmware is built for.
	Machine = "mps2-an385"
	// Prompt is the firmware shell's prompt.
	Prompt = "qemu> "
	// Version is what the firmware's version command prints.
	Version = "hilrun-qemu 1.0.0"

	CounterAddr = 0x20000000 // counter: uint32, milliseconds since boot
	BlinkAddr   = 0x20000004 // blink: uint32, non-zero toggles the LED
	FlagAddr    = 0x20000008 // flag: uint32, set by the flag command
	FlagAtAddr  = 0x2000000c // flag_at: uint32, uptime in ms when flag was set
	LEDAddr     = 0x40028000 // FPGA I/O LED0 register: bit 0 is the LED
)

// UBootPath is where Debian's u-boot-qemu package installs U-Boot for
// QEMU's 32-bit "virt" machine.
const UBootPath = "/usr/lib/u-boot/qemu_arm/u-boot.bin"

// Timeout bounds each wait of the helpers: QEMU's start, a build, a reply.
// It is an upper bound for a hang, not a speed requirement: QEMU boots
// slowly on a busy machine.
const Timeout = 60 * time.Second

// NeedQEMU returns the path of qemu-system-arm, or ends t (see
// testenv.Missing).
func NeedQEMU(t testing.TB) string {
	t.Helper()
	return testenv.NeedTool(t, qemu.DefaultBinary, "apt-get install qemu-system-arm")
}

// UBoot returns the path of U-Boot for "virt", or ends t.
func UBoot(t testing.TB) string {
	t.Helper()
	if _, err := os.Stat(UBootPath); err != nil {
		testenv.Missing(t, "U-Boot for QEMU is not installed (apt-get install u-boot-qemu): %v", err)
	}
	return UBootPath
}

var firmware struct {
	once sync.Once
	elf  string
	err  error
}

// Firmware returns the path of firmware/qemu's ELF, built with make the
// first time a test of the binary asks. The build lands in a directory of
// the system's temporary directory named after a hash of the sources, so
// test binaries share it until the sources change.
func Firmware(t testing.TB) string {
	t.Helper()
	testenv.NeedTool(t, "make", "apt-get install make")
	testenv.NeedTool(t, "arm-none-eabi-gcc", "apt-get install gcc-arm-none-eabi")
	firmware.once.Do(func() { firmware.elf, firmware.err = build() })
	if firmware.err != nil {
		t.Fatalf("build the QEMU firmware: %v", firmware.err)
	}
	return firmware.elf
}

// SourceDir returns firmware/qemu of the repository the test runs in,
// found from the working directory upwards.
func SourceDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		src := filepath.Join(dir, "firmware", "qemu")
		if _, err := os.Stat(filepath.Join(src, "Makefile")); err == nil {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				return src, nil
			}
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("firmware/qemu not found above the working directory")
		}
		dir = up
	}
}

func build() (string, error) {
	src, err := SourceDir()
	if err != nil {
		return "", err
	}
	sum, err := hashSources(src)
	if err != nil {
		return "", fmt.Errorf("hash the sources: %w", err)
	}
	cache, err := cacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, sum)
	elf := filepath.Join(dir, "qemu.elf")
	if _, err := os.Stat(elf); err == nil {
		return elf, nil
	}
	// Build beside the final directory and rename it into place, so that
	// test binaries building at once never see half a build.
	tmp, err := os.MkdirTemp(cache, "build-")
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", "-s", "-C", src, "BUILD="+tmp)
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("make -C %s: %w\n%s", src, err, out)
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another test binary got there first: its build is as good.
		os.RemoveAll(tmp)
		if _, serr := os.Stat(elf); serr != nil {
			return "", fmt.Errorf("move the build into place: %w", err)
		}
	}
	return elf, nil
}

// cacheDir is the folder, private to this user, where test binaries
// share the firmware they build and the lock they take turns through: a
// folder another user made first could hand them a firmware of theirs.
func cacheDir() (string, error) {
	dir := filepath.Join(os.TempDir(), "hilrun-qemu-firmware-"+strconv.Itoa(os.Getuid()))
	if err := tmpdir.Private(dir); err != nil {
		return "", fmt.Errorf("the folder for test firmware: %w", err)
	}
	return dir, nil
}

// hashSources hashes the files of src that the build reads.
func hashSources(src string) (string, error) {
	var files []string
	for _, pat := range []string{"Makefile", "*.ld", "src/*.c", "src/*.h"} {
		m, err := filepath.Glob(filepath.Join(src, pat))
		if err != nil {
			return "", err
		}
		files = append(files, m...)
	}
	sort.Strings(files)
	h := sha256.New()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", filepath.Base(f), len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// Procs starts programs as the command line does: any program, the
// user's environment.
var Procs = process.Permit(environ.Host())

// Start starts QEMU with spec (under Procs when it has no policy) and closes it when t ends; the Instance's log
// goes to the test log on failure.
func Start(t testing.TB, spec qemu.Spec) *qemu.Instance {
	t.Helper()
	NeedQEMU(t)
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	if spec.Procs.Allow == nil {
		spec.Procs = Procs
	}
	in, err := qemu.Start(ctx, spec)
	if err != nil {
		t.Fatalf("start qemu: %v", err)
	}
	t.Cleanup(func() {
		if err := in.Close(context.Background()); err != nil {
			t.Errorf("close qemu: %v", err)
		}
		if t.Failed() {
			t.Logf("qemu's output:\n%s", in.Output())
		}
	})
	return in
}

// StartFirmware builds the firmware and starts it under QEMU.
func StartFirmware(t testing.TB) *qemu.Instance {
	t.Helper()
	elf := Firmware(t)
	return Start(t, qemu.Spec{Machine: Machine, Kernel: elf})
}

// StartUBoot starts U-Boot on QEMU's "virt" machine.
func StartUBoot(t testing.TB) *qemu.Instance {
	t.Helper()
	return Start(t, qemu.Spec{Machine: "virt", BIOS: UBoot(t)})
}

// Console is a QEMU guest's serial console, for tests.
type Console struct {
	t testing.TB
	*serialx.Console
	syncs int // markers Prompt sent
}

// OpenConsole opens in's console and closes it when t ends.
func OpenConsole(t testing.TB, in *qemu.Instance) *Console {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	c, err := serialx.Open(ctx, "qemu", serialx.Config{Path: in.ConsolePath(), NoLock: true, Devices: devices.Anywhere()})
	if err != nil {
		t.Fatalf("open qemu's console: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return &Console{t: t, Console: c}
}

// Send writes line and a carriage return, and returns the cursor where the
// reply begins.
func (c *Console) Send(line string) int64 {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	cur, err := c.Write(ctx, []byte(line+"\r"))
	if err != nil {
		c.t.Fatalf("send %q: %v", line, err)
	}
	return cur
}

// Expect waits for the regular expression re in the output from cursor
// from and returns the match; it fails t after Timeout.
func (c *Console) Expect(from int64, re string) stream.Match {
	c.t.Helper()
	p, err := stream.Regexp(re)
	if err != nil {
		c.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	m, err := c.Console.Expect(ctx, from, []stream.Pattern{p}, nil)
	if err != nil {
		c.t.Fatalf("expect %q: %v; the console's last output:\n%s", re, err, c.Tail(20, 4096))
	}
	return m
}

// Command sends line, waits for the reply up to the next prompt and
// returns it, without the echoed line and the prompt.
func (c *Console) Command(line, prompt string) string {
	c.t.Helper()
	from := c.Send(line)
	m := c.Expect(from, "\r?\n((?s:.*?))"+regexp.QuoteMeta(prompt))
	return m.Groups[1]
}

// Prompt makes sure the guest's shell is at its prompt and that nothing
// older is still to come: it sends empty lines until a prompt follows one,
// then echoes a marker and waits for it and the prompt after it. The
// marker matters: a prompt printed before the console was opened may be
// read only after the first empty line was sent, and would otherwise pass
// for the reply to a later command. The guest's shell needs an echo
// command, as the firmware and U-Boot have.
func (c *Console) Prompt(prompt string) {
	c.t.Helper()
	// An empty line interrupts U-Boot's autoboot and gets a fresh prompt
	// from a shell; a guest still booting may miss it, so it is repeated
	// until the prompt follows.
	deadline := time.Now().Add(Timeout)
	for {
		from := c.Send("")
		p := stream.Literal(prompt)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := c.Console.Expect(ctx, from, []stream.Pattern{p}, nil)
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("no prompt %q after %v: %v; the console's last output:\n%s", prompt, Timeout, err, c.Tail(20, 4096))
		}
	}
	c.syncs++
	marker := "hilrun-sync-" + strconv.Itoa(c.syncs)
	from := c.Send("echo " + marker)
	// The echoed command line holds the marker too, but not followed by a
	// line end and the prompt.
	c.Expect(from, regexp.QuoteMeta(marker)+`\r?\n`+regexp.QuoteMeta(prompt))
}

// Counter reads the firmware's millisecond counter with its count command.
func (c *Console) Counter() uint64 {
	c.t.Helper()
	from := c.Send("count")
	m := c.Expect(from, `counter: (\d+)\r\n`)
	n, err := strconv.ParseUint(m.Groups[1], 10, 32)
	if err != nil {
		c.t.Fatal(err)
	}
	return n
}

// BuildInTree runs make in firmware/qemu as the README tells users to,
// into its own build/ folder (ignored by git), where the example
// sequences look for their ELF file. Test binaries that run at once take
// turns through a lock file, so two makes never write the same objects.
// It returns the ELF's path.
func BuildInTree(t testing.TB) string {
	t.Helper()
	testenv.NeedTool(t, "make", "apt-get install make")
	testenv.NeedTool(t, "arm-none-eabi-gcc", "apt-get install gcc-arm-none-eabi")
	src, err := SourceDir()
	if err != nil {
		t.Fatal(err)
	}
	cache, err := cacheDir()
	if err != nil {
		t.Fatal(err)
	}
	lock, err := tmpdir.OpenLock(filepath.Join(cache, "intree.lock"))
	if err != nil {
		t.Fatalf("open the firmware build's lock file: %v", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatalf("lock the firmware build: %v", err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "make", "-s", "-C", src).CombinedOutput(); err != nil {
		t.Fatalf("make -C %s: %v\n%s", src, err, out)
	}
	return filepath.Join(src, "build", "qemu.elf")
}
