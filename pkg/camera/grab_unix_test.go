//go:build unix

package camera

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/gate/environ"
	"github.com/hilrun/hilrun/pkg/gate/process"
)

// TestGrabTimeout grabs from a source that is slower than the context:
// with -re, a testsrc at one frame every ten seconds gives its first frame
// at once and the next only after ten seconds.
func TestGrabTimeout(t *testing.T) {
	needFFmpeg(t)
	t.Parallel()
	tests := []struct {
		name    string
		timeout time.Duration
		frames  int // frames written before the deadline; -1: 0 or 1
	}{
		// ffmpeg may not even have started by then.
		{"short", 500 * time.Millisecond, -1},
		// Time enough for the first frame, even on a loaded machine, but
		// not the second, 20 s later.
		{"partial", 10 * time.Second, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			src := Source{Procs: hostProcs, Format: "lavfi", Input: "testsrc=size=32x24:rate=0.05", InputArgs: []string{"-re"}}
			ctx, cancel := context.WithTimeout(context.Background(), tt.timeout)
			defer cancel()
			pid := 0
			begin := time.Now()
			files, err := grab(ctx, src, 3, dir, "slow", func(p int) { pid = p })
			took := time.Since(begin)

			if k := kindOf(t, err); k != Timeout {
				t.Fatalf("error kind %v, want %v: %v", k, Timeout, err)
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("error %v does not wrap context.DeadlineExceeded", err)
			}
			if took > tt.timeout+10*time.Second {
				t.Errorf("Grab returned %v after its %v deadline", took-tt.timeout, tt.timeout)
			}
			if want := `capture from filter graph "testsrc=size=32x24:rate=0.05" timed out after `; !strings.Contains(err.Error(), want) {
				t.Errorf("error %q, want it to contain %q", err, want)
			}
			if tt.frames >= 0 && len(files) != tt.frames || len(files) > 1 {
				t.Fatalf("Grab returned %q, want %d frames", files, tt.frames)
			}
			if len(files) == 1 {
				checkPNG(t, files[0], 32, 24)
				if !strings.HasSuffix(files[0], "/slow-1.png") || !strings.Contains(err.Error(), "with 1 of 3 frames written") {
					t.Errorf("Grab returned %q with error %q", files, err)
				}
				checkDir(t, dir, "slow-1.png")
			} else {
				checkDir(t, dir)
			}
			if pid == 0 {
				t.Fatal("ffmpeg never started")
			}
			// Kill with signal 0 finds any process left in ffmpeg's group.
			if err := syscall.Kill(-pid, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("ffmpeg's process group %d is still there (kill: %v)", pid, err)
			}
		})
	}
}

// TestGrabEnv checks that ffmpeg gets the environment of Source.Procs as
// its whole environment: a server passes a minimal one so that ffmpeg,
// which can read /proc/self/environ, holds none of its secrets; the
// command line passes the user's.
func TestGrabEnv(t *testing.T) {
	t.Setenv("HILRUN_CAMERA_CANARY", "s3cret")
	dir := t.TempDir()
	fake := filepath.Join(dir, "ffmpeg")
	// Writes its environment beside itself, then fails as a camera would.
	script := "#!/bin/sh\nenv > \"$(dirname \"$0\")/env-$HILRUN_CASE.txt\"\nexit 1\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		env    environ.Env
		file   string
		secret bool
	}{
		{"minimal", environ.Of([]string{"HILRUN_CASE=minimal", "PATH=/usr/bin:/bin"}), "env-minimal.txt", false},
		{"inherited", environ.Host(), "env-.txt", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := Source{Format: "lavfi", Input: "testsrc", FFmpeg: fake, Procs: process.Permit(tc.env)}
			if _, err := Grab(context.Background(), src, 1, t.TempDir(), "f"); err == nil {
				t.Fatal("the fake ffmpeg succeeded")
			}
			got, err := os.ReadFile(filepath.Join(dir, tc.file))
			if err != nil {
				t.Fatalf("ffmpeg wrote no environment: %v", err)
			}
			if has := strings.Contains(string(got), "s3cret"); has != tc.secret {
				t.Errorf("ffmpeg's environment holds the process's secret: %v, want %v:\n%s", has, tc.secret, got)
			}
		})
	}
}
