package camera

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/gate/environ"
	"github.com/hilrun/hilrun/pkg/gate/process"
	"github.com/hilrun/hilrun/pkg/imaging"
	"github.com/hilrun/hilrun/pkg/testenv"
)

// needFFmpeg skips the test when ffmpeg is not installed, except under
// CI=true, where it must be.
// hostProcs starts programs as the command line does.
var hostProcs = process.Permit(environ.Host())

func needFFmpeg(t *testing.T) {
	t.Helper()
	testenv.NeedTool(t, "ffmpeg", "apt-get install ffmpeg")
}

// grabOK is Grab with a generous timeout that fails the test on an error.
func grabOK(t *testing.T, src Source, n int, dir, base string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	files, err := Grab(ctx, src, n, dir, base)
	if err != nil {
		t.Fatalf("Grab: %v", err)
	}
	return files
}

// checkPNG fails the test unless path holds a w by h PNG.
func checkPNG(t *testing.T, path string, w, h int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
		t.Errorf("%s is %dx%d, want %dx%d", path, b.Dx(), b.Dy(), w, h)
	}
}

func names(files []string) []string {
	var out []string
	for _, f := range files {
		out = append(out, filepath.Base(f))
	}
	return out
}

// checkDir fails the test unless dir holds exactly the files named, which
// also means Grab left no hidden working directory behind.
func checkDir(t *testing.T, dir string, want ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s holds %q, want %q", dir, got, want)
	}
}

func TestGrab(t *testing.T) {
	needFFmpeg(t)
	t.Parallel()
	testsrc := Source{Procs: hostProcs, Format: "lavfi", Input: "testsrc=size=320x240:rate=25"}
	tests := []struct {
		name  string
		src   Source
		n     int
		w, h  int
		files []string
	}{
		{"one frame", testsrc, 1, 320, 240, []string{"frame.png"}},
		{"three frames", testsrc, 3, 320, 240, []string{"frame-1.png", "frame-2.png", "frame-3.png"}},
		{"scaled", Source{Procs: hostProcs, Format: "lavfi", Input: testsrc.Input, Size: "160x90"}, 2, 160, 90, []string{"frame-1.png", "frame-2.png"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			files := grabOK(t, tt.src, tt.n, dir, "frame")
			if got := names(files); !slices.Equal(got, tt.files) {
				t.Fatalf("Grab wrote %q, want %q", got, tt.files)
			}
			for _, f := range files {
				if filepath.Dir(f) != dir {
					t.Errorf("%s is not in %s", f, dir)
				}
				checkPNG(t, f, tt.w, tt.h)
			}
			checkDir(t, dir, tt.files...)
		})
	}
}

// TestGrabKeepsEveryPicture grabs red, then green, then blue frames under
// one name and checks that each capture got new files and the earlier ones
// kept their colour.
func TestGrabKeepsEveryPicture(t *testing.T) {
	needFFmpeg(t)
	t.Parallel()
	colours := []string{"red", "white", "blue"}
	tests := []struct {
		name  string
		n     int
		files [][]string
	}{
		{"one frame", 1, [][]string{{"led.png"}, {"led-2.png"}, {"led-3.png"}}},
		{"two frames", 2, [][]string{{"led-1.png", "led-2.png"}, {"led-2-1.png", "led-2-2.png"}, {"led-3-1.png", "led-3-2.png"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			var all [][]string
			for i, c := range colours {
				src := Source{Procs: hostProcs, Format: "lavfi", Input: "color=c=" + c + ":size=64x48"}
				files := grabOK(t, src, tt.n, dir, "led")
				if got := names(files); !slices.Equal(got, tt.files[i]) {
					t.Fatalf("capture %d wrote %q, want %q", i+1, got, tt.files[i])
				}
				all = append(all, files)
			}
			for i, files := range all {
				want, _ := imaging.ParseColor(colours[i])
				for _, f := range files {
					img, err := imaging.Load(f)
					if err != nil {
						t.Fatal(err)
					}
					m, err := imaging.Measure(img, imaging.Rect{})
					if err != nil {
						t.Fatal(err)
					}
					if d := imaging.Distance(m.Mean, want); d > 0.05 {
						t.Errorf("%s is %v, want %s (distance %.3f)", filepath.Base(f), m.Mean, colours[i], d)
					}
				}
			}
		})
	}
}

func TestGrabMeasure(t *testing.T) {
	needFFmpeg(t)
	t.Parallel()
	tests := []struct {
		colour     string
		brightness float64 // Rec. 601 luma of the pure colour
	}{
		{"red", 0.299},
		{"green", 0.587}, // ffmpeg's green is #008000: see below
		{"white", 1},
		{"black", 0},
	}
	for _, tt := range tests {
		t.Run(tt.colour, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			input := "color=c=" + tt.colour + ":size=64x48"
			if tt.colour == "green" {
				input = "color=c=0x00ff00:size=64x48"
			}
			files := grabOK(t, Source{Procs: hostProcs, Format: "lavfi", Input: input}, 1, dir, tt.colour)
			img, err := imaging.Load(files[0])
			if err != nil {
				t.Fatal(err)
			}
			m, err := imaging.Measure(img, imaging.Rect{})
			if err != nil {
				t.Fatal(err)
			}
			want, _ := imaging.ParseColor(tt.colour)
			// ffmpeg passes the colour through 8-bit limited-range YUV
			// 4:2:0 on its way to the PNG, which costs a few levels.
			if d := imaging.Distance(m.Mean, want); d > 0.03 {
				t.Errorf("mean colour %v (%+v), want %s (distance %.3f)", m.Mean, m.Mean, tt.colour, d)
			}
			if diff := m.Brightness - tt.brightness; diff < -0.03 || diff > 0.03 {
				t.Errorf("brightness %.3f, want %.3f", m.Brightness, tt.brightness)
			}
			if m.Pixels != 64*48 || m.Region != (imaging.Rect{X: 0, Y: 0, W: 64, H: 48}) {
				t.Errorf("measured %d pixels in %v, want the whole 64x48 frame", m.Pixels, m.Region)
			}
		})
	}
}

// kindOf returns err's ErrorKind, failing the test unless err is an *Error.
func kindOf(t *testing.T, err error) ErrorKind {
	t.Helper()
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("error %v (%T) is not a *camera.Error", err, err)
	}
	return ce.Kind
}

// TestGrabErrors covers the errors found before ffmpeg runs, which need no
// ffmpeg.
func TestGrabErrors(t *testing.T) {
	t.Parallel()
	lavfi := Source{Procs: hostProcs, Format: "lavfi", Input: "testsrc"}
	tests := []struct {
		name string
		src  Source
		n    int
		base string
		kind ErrorKind
		want string
	}{
		{"missing binary", Source{Procs: hostProcs, Format: "lavfi", Input: "testsrc", FFmpeg: "hilrun-no-such-ffmpeg"}, 1, "f", NoFFmpeg,
			"hilrun-no-such-ffmpeg not found on PATH: install it (Debian/Ubuntu: apt-get install ffmpeg; macOS: brew install ffmpeg)"},
		{"missing binary path", Source{Procs: hostProcs, Format: "lavfi", Input: "testsrc", FFmpeg: "/nonexistent/bin/ffmpeg"}, 1, "f", NoFFmpeg,
			"/nonexistent/bin/ffmpeg not found: install it (Debian/Ubuntu: apt-get install ffmpeg; macOS: brew install ffmpeg) or correct Source.FFmpeg"},
		{"missing camera", Source{Procs: hostProcs, Format: "v4l2", Input: "/dev/video99"}, 1, "f", NoCamera,
			"/dev/video99 does not exist: is the camera plugged in? (`ls /dev/video*` lists cameras; this machine has "},
		{"missing camera index", Source{Procs: hostProcs, Format: "v4l2", Input: "99"}, 1, "f", NoCamera,
			"/dev/video99 does not exist: is the camera plugged in?"},
		{"not a device", Source{Procs: hostProcs, Format: "v4l2", Input: "/dev/null/x"}, 1, "f", NoCamera, "/dev/null/x"},
		{"no frames", lavfi, 0, "f", Invalid, "capture 0 frames: want at least 1"},
		{"no input", Source{Procs: hostProcs}, 1, "f", Invalid, "capture: no input: set Source.Input"},
		{"bad base", lavfi, 1, "../f", Invalid, `capture: frame name "../f": want a file name without a directory`},
		{"empty base", lavfi, 1, ".png", Invalid, `capture: frame name "": want a file name`},
		{"bad size", Source{Procs: hostProcs, Format: "lavfi", Input: "testsrc", Size: "big"}, 1, "f", Invalid,
			`capture from filter graph "testsrc": size "big": want width x height in pixels, such as 640x480`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			files, err := Grab(context.Background(), tt.src, tt.n, dir, tt.base)
			if files != nil {
				t.Errorf("Grab returned files %q", files)
			}
			if k := kindOf(t, err); k != tt.kind {
				t.Errorf("Grab error kind %v, want %v: %v", k, tt.kind, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Grab error:\n %v\nwant it to contain\n %s", err, tt.want)
			}
			checkDir(t, dir)
		})
	}
}

func TestGrabNoFFmpegWraps(t *testing.T) {
	t.Parallel()
	_, err := Grab(context.Background(), Source{Procs: hostProcs, Format: "lavfi", Input: "testsrc", FFmpeg: "hilrun-no-such-ffmpeg"}, 1, t.TempDir(), "f")
	if !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("error %v does not wrap exec.ErrNotFound", err)
	}
	_, err = Grab(context.Background(), Source{Procs: hostProcs, Format: "v4l2", Input: "/dev/video99"}, 1, t.TempDir(), "f")
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("error %v does not wrap os.ErrNotExist", err)
	}
}

// TestGrabFFmpegErrors covers the errors ffmpeg itself causes.
func TestGrabFFmpegErrors(t *testing.T) {
	needFFmpeg(t)
	t.Parallel()
	tests := []struct {
		name  string
		src   Source
		n     int
		kind  ErrorKind
		files int
		want  []string
	}{
		{"no such filter", Source{Procs: hostProcs, Format: "lavfi", Input: "nosuchfilter=x"}, 1, Failed, 0,
			[]string{`capture from filter graph "nosuchfilter=x": ffmpeg failed (exit status 1) with 0 of 1 frames written: `,
				"No such filter: 'nosuchfilter'"}},
		{"bad option", Source{Procs: hostProcs, Format: "lavfi", Input: "testsrc=size=huge"}, 1, Failed, 0,
			[]string{`Unable to parse option value "huge" as image size`}},
		{"missing file", Source{Procs: hostProcs, Input: "/nonexistent/clip.mp4"}, 1, Failed, 0,
			[]string{"capture from /nonexistent/clip.mp4: ffmpeg failed", "No such file or directory"}},
		// Two frames at 10 a second: the stream ends before a fifth frame.
		{"stream ends", Source{Procs: hostProcs, Format: "lavfi", Input: "testsrc=size=32x24:rate=10:duration=0.2"}, 5, Incomplete, 2,
			[]string{`capture from filter graph "testsrc=size=32x24:rate=10:duration=0.2": ffmpeg wrote 2 of 5 frames and exited: did the stream end?`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			files, err := Grab(ctx, tt.src, tt.n, dir, "f")
			if k := kindOf(t, err); k != tt.kind {
				t.Errorf("Grab error kind %v, want %v: %v", k, tt.kind, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Grab error:\n %v\nwant it to contain\n %s", err, w)
				}
			}
			var ce *Error
			if errors.As(err, &ce) && (len(ce.Argv) == 0 || ce.Argv[0] != "ffmpeg") {
				t.Errorf("Error.Argv = %q, want the ffmpeg command", ce.Argv)
			}
			if len(files) != tt.files {
				t.Errorf("Grab returned %d files %q, want %d", len(files), files, tt.files)
			}
			for _, f := range files {
				checkPNG(t, f, 32, 24)
			}
			var want []string
			if tt.files > 0 {
				for i := 1; i <= tt.files; i++ {
					want = append(want, fmt.Sprintf("f-%d.png", i))
				}
			}
			checkDir(t, dir, want...)
		})
	}
}

func TestGrabCanceled(t *testing.T) {
	needFFmpeg(t)
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	src := Source{Procs: hostProcs, Format: "lavfi", Input: "testsrc=rate=0.1", InputArgs: []string{"-re"}}
	started := make(chan int, 1)
	done := make(chan error, 1)
	go func() {
		_, err := grab(ctx, src, 3, t.TempDir(), "f", func(pid int) { started <- pid })
		done <- err
	}()
	select {
	case <-started:
	case err := <-done:
		t.Fatalf("Grab ended before cancelling: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("ffmpeg did not start")
	}
	cancel()
	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Grab did not return after cancelling")
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v does not wrap context.Canceled", err)
	}
	if k := kindOf(t, err); k != Canceled {
		t.Errorf("error kind %v, want %v", k, Canceled)
	}
	if !strings.Contains(err.Error(), `capture from filter graph "testsrc=rate=0.1" canceled after `) {
		t.Errorf("error %q", err)
	}
}

func TestFrameName(t *testing.T) {
	tests := []struct {
		n, k, i int
		want    string
	}{
		{1, 1, 1, "led.png"},
		{1, 2, 1, "led-2.png"},
		{3, 1, 3, "led-3.png"},
		{3, 4, 2, "led-4-2.png"},
	}
	for _, tt := range tests {
		if got := frameName("led", tt.n, tt.k, tt.i); got != tt.want {
			t.Errorf("frameName(led, n=%d, capture %d, frame %d) = %s, want %s", tt.n, tt.k, tt.i, got, tt.want)
		}
	}
}

// TestReserve checks that a capture moves on to the next free name as a
// whole when any of its names is taken, whoever took it.
func TestReserve(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"led-2.png", "led-2-3.png"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("taken"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := reserve(dir, "led", 3, []int{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"led-3-1.png", "led-3-2.png", "led-3-3.png"}; !slices.Equal(names(got), want) {
		t.Errorf("reserve = %q, want %q", names(got), want)
	}
	// A capture cut short names the frames it has as a full one would.
	got, err = reserve(dir, "led", 3, []int{1})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"led-1.png"}; !slices.Equal(names(got), want) {
		t.Errorf("reserve = %q, want %q", names(got), want)
	}
	for _, f := range []string{"led-2.png", "led-2-3.png"} {
		if b, err := os.ReadFile(filepath.Join(dir, f)); err != nil || !bytes.Equal(b, []byte("taken")) {
			t.Errorf("%s changed: %q, %v", f, b, err)
		}
	}
	checkDir(t, dir, "led-1.png", "led-2.png", "led-2-3.png", "led-3-1.png", "led-3-2.png", "led-3-3.png")
}

func TestReserveConcurrent(t *testing.T) {
	dir := t.TempDir()
	const captures = 20
	var wg sync.WaitGroup
	results := make([][]string, captures)
	for c := range captures {
		wg.Go(func() {
			got, err := reserve(dir, "led", 2, []int{1, 2})
			if err != nil {
				t.Error(err)
			}
			results[c] = got
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, r := range results {
		for _, p := range r {
			if seen[p] {
				t.Errorf("%s reserved twice", p)
			}
			seen[p] = true
		}
	}
	if len(seen) != 2*captures {
		t.Errorf("%d names reserved, want %d", len(seen), 2*captures)
	}
}

func TestTailBuffer(t *testing.T) {
	var tb tailBuffer
	for i := range 3000 {
		fmt.Fprintf(&tb, "line %d\n\n", i)
	}
	if got, want := tb.lines(3), []string{"line 2997", "line 2998", "line 2999"}; !slices.Equal(got, want) {
		t.Errorf("lines(3) = %q, want %q", got, want)
	}
	if len(tb.buf) > 2*tailMax {
		t.Errorf("buffer holds %d bytes, want at most %d", len(tb.buf), 2*tailMax)
	}
}
