package serialx

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/redact"
	"github.com/hilrun/hilrun/pkg/stream"
)

// TestSecretSplitAcrossChunks has the device print a secret in two writes,
// the second after the console read the first: the buffer, the log, the
// timeline and the receivers all hold '*' in its place, as many as its
// bytes, and the end of the line still arrives.
func TestSecretSplitAcrossChunks(t *testing.T) {
	d := newDevice(t)
	secrets, err := redact.New([]redact.Secret{{Name: "wifi_psk", Value: "hunter22-psk"}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := Open(ctx, "dut", Config{Devices: anyDevice, Dial: anyAddr, Path: d.path, LogDir: dir, Secrets: secrets, SecretFlush: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	var got []byte
	c.OnReceive(func(_ time.Time, _ int64, p []byte) { got = append(got, p...) })
	d.print("psk=hunter")
	if _, err := c.Expect(ctx, 0, []stream.Pattern{stream.Literal("psk=")}, nil); err != nil {
		t.Fatal(err)
	}
	d.print("22-psk ok\n")
	if _, err := c.Expect(ctx, 0, []stream.Pattern{stream.Literal("ok\n")}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(ctx, []byte("join hunter22-psk\n")); err != nil {
		t.Fatal(err)
	}
	data, _, _ := c.Read(0, 1<<20)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	want := "psk=************ ok\n"
	if string(data) != want || string(got) != want {
		t.Errorf("buffer %q, receivers %q, want %q", data, got, want)
	}
	for _, name := range []string{"dut.log", "dut.timeline.jsonl"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "hunter") || strings.Contains(string(b), "22-psk") {
			t.Errorf("%s holds the secret:\n%s", name, b)
		}
	}
}

// TestSecretHeldUntilQuiet lets out the start of what could have been a
// secret once the device is quiet.
func TestSecretHeldUntilQuiet(t *testing.T) {
	d := newDevice(t)
	secrets, _ := redact.New([]redact.Secret{{Name: "wifi_psk", Value: "hunter22-psk"}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := Open(ctx, "dut", Config{Devices: anyDevice, Dial: anyAddr, Path: d.path, Secrets: secrets})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	d.print("$ hunt")
	if _, err := c.Expect(ctx, 0, []stream.Pattern{stream.Literal("$ hunt")}, nil); err != nil {
		t.Fatal(err)
	}
}
