package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/qemu/qemutest"
)

// A REPL session against real U-Boot under QEMU, recorded with
// :record --expects, replays with hilrun run: each recorded expect is what
// its own command printed before U-Boot's next prompt (or the prompt, for
// commands that print nothing), never the prompt and the next command's
// echo. The bench file gives the console U-Boot's prompt and echo; the
// recording keeps them.
func TestReplRecordingAgainstUBootReplays(t *testing.T) {
	in := qemutest.StartUBoot(t)
	dir := t.TempDir()
	bench := writeFile(t, dir, "uboot.bench.yaml", "devices:\n  console: {port: "+in.ConsolePath()+", prompt: \"=> \", echo: true}\n")
	r := startReplWith(t, "--bench", bench)
	for _, line := range []struct{ typed, shown string }{
		// The first send on the connection does not wait: it stops the
		// autoboot.
		{"send", `send    ""`},
		{"send version", "send    version"},
		{"send mw.l 0x40200000 0xcafef00d", "send    mw.l"},
		{"send md.l 0x40200000 0x40", "send    md.l"},
		{"send crc32 0x40200000 4", "send    crc32"},
		{"send setenv greeting hello", "send    setenv"},
		{"send printenv greeting", "send    printenv"},
	} {
		r.typ(line.typed + "\r")
		r.waitFor("✓")
		r.waitFor(line.shown)
	}
	r.typ(":record --expects rec.yaml\r")
	r.waitFor("wrote rec.yaml")
	r.quit()
	file := filepath.Join(r.cmd.Dir, "rec.yaml")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	rec := string(data)
	t.Logf("recorded:\n%s", rec)
	for _, want := range []string{
		"prompt: '=> '", "echo: true",
		"expect: 'U-Boot 20", "expect: '40200000: cafef00d", "expect: crc32 for 40200000 ... 40200003 ==> 9764938c",
		"expect: greeting=hello",
	} {
		if !strings.Contains(rec, want) {
			t.Errorf("the recording lacks %q", want)
		}
	}
	if strings.Contains(rec, "=> md") || strings.Contains(rec, "=> crc32") || strings.Contains(rec, "=> printenv") {
		t.Errorf("an expect holds the next command's echo:\n%s", rec)
	}
	// The recording keeps the session's bench out of the file: it binds
	// on any bench. It replays on the same U-Boot, at its prompt, and on
	// a U-Boot that is just booting, whose autoboot its first send stops.
	if strings.Contains(rec, in.ConsolePath()) {
		t.Errorf("the recording holds the session's port %s:\n%s", in.ConsolePath(), rec)
	}
	fresh := qemutest.StartUBoot(t)
	for _, args := range [][]string{{"run", "--bench", bench, file}, {"run", "--port", "console=" + fresh.ConsolePath(), file}} {
		out, err := exec.Command(hilrunBinary(t), args...).CombinedOutput()
		if err != nil {
			t.Fatalf("hilrun %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		if !strings.Contains(string(out), "PASSED rec:") {
			t.Errorf("hilrun %s: no verdict:\n%s", strings.Join(args, " "), out)
		}
	}
}

// Without a prompt, a recorded expect holds only what the device printed
// before the next send: an empty line's reply is not the next command's.
func TestReplRecordStopsAtTheNextSend(t *testing.T) {
	r := startRepl(t)
	r.typ("send\r")
	r.waitFor(`send    ""`)
	r.typ("{send: version, expect: hilrun}\r")
	r.waitFor("send    version")
	r.typ(":record --expects rec.yaml\r")
	r.waitFor("wrote rec.yaml")
	r.quit()
	data, err := os.ReadFile(filepath.Join(r.cmd.Dir, "rec.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if first := strings.SplitN(string(data), "- ", 3); len(first) < 3 || strings.Contains(first[1], "expect") {
		t.Errorf("the empty send got an expect from the next command's reply:\n%s", data)
	}
}
