package sim

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/testenv"
)

// newCamera returns a board that is never started (the camera needs only
// its memory) and a camera on it, both closed when the test ends.
func newCamera(t *testing.T) (*Board, *Camera) {
	t.Helper()
	b := New(Options{})
	t.Cleanup(func() { b.Close() })
	c, err := b.StartCamera("")
	if err != nil {
		t.Fatal(err)
	}
	return b, c
}

// setLED drives the LED pin through GPIOODR, as a debugger's write would.
func setLED(t *testing.T, b *Board, on bool) {
	t.Helper()
	var v uint32
	if on {
		v = 1 << LEDPin
	}
	if err := b.Memory().Write(GPIOODR, 32, v); err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, method, url string) *http.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), ioTimeout)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// cameraGoroutines returns the stacks of goroutines running camera code
// whose stack contains frame: "sim." for all of them, the Serve loop
// included, or "sim.(*Camera).stream" for stream handlers.
func cameraGoroutines(frame string) []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		camera := strings.Contains(g, "sim.(*Camera)") || strings.Contains(g, "sim.(*Board).startCamera")
		if camera && strings.Contains(g, frame) {
			out = append(out, g)
		}
	}
	return out
}

// waitCameraGoroutines fails unless the camera goroutines matching frame
// (see cameraGoroutines) are soon gone. After Close one may still be
// returning from its last function, its work done.
func waitCameraGoroutines(t *testing.T, frame, after string) {
	t.Helper()
	deadline := time.Now().Add(ioTimeout)
	for {
		gs := cameraGoroutines(frame)
		if len(gs) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d camera goroutines left %v after %s:\n%s", len(gs), ioTimeout, after, strings.Join(gs, "\n\n"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestCameraStills(t *testing.T) {
	tests := []struct {
		path        string
		contentType string
		decode      func(io.Reader) (image.Image, error)
	}{
		{CameraPNGPath, "image/png", png.Decode},
		{CameraJPEGPath, "image/jpeg", jpeg.Decode},
	}
	for _, tt := range tests {
		t.Run(strings.TrimPrefix(tt.path, "/"), func(t *testing.T) {
			b, c := newCamera(t)
			for i, on := range []bool{false, true, false, true} {
				setLED(t, b, on)
				resp := get(t, http.MethodGet, c.URL()+tt.path)
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("GET %s: %s", tt.path, resp.Status)
				}
				if ct := resp.Header.Get("Content-Type"); ct != tt.contentType {
					t.Errorf("Content-Type %q, want %q", ct, tt.contentType)
				}
				img, err := tt.decode(resp.Body)
				if err != nil {
					t.Fatalf("decode %s: %v", tt.path, err)
				}
				checkLED(t, fmt.Sprintf("frame %d", i), img, on)
			}
		})
	}
}

// TestCameraStream reads the stream as a multipart client would and checks
// that its frames follow the LED.
func TestCameraStream(t *testing.T) {
	b, c := newCamera(t)
	resp := get(t, http.MethodGet, c.URL()+CameraStreamPath)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", CameraStreamPath, resp.Status)
	}
	mt, params, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/x-mixed-replace" || params["boundary"] == "" {
		t.Fatalf("Content-Type %q, want multipart/x-mixed-replace with a boundary", resp.Header.Get("Content-Type"))
	}
	mr := multipart.NewReader(resp.Body, params["boundary"])

	parts := 0
	next := func() image.Image {
		t.Helper()
		p, err := mr.NextPart()
		if err != nil {
			t.Fatalf("part %d: %v", parts, err)
		}
		parts++
		if ct := p.Header.Get("Content-Type"); ct != "image/jpeg" {
			t.Fatalf("part %d: Content-Type %q, want image/jpeg", parts, ct)
		}
		data, err := io.ReadAll(p)
		if err != nil {
			t.Fatalf("part %d: %v", parts, err)
		}
		if cl := p.Header.Get("Content-Length"); cl != strconv.Itoa(len(data)) {
			t.Fatalf("part %d: Content-Length %q, body %d bytes", parts, cl, len(data))
		}
		img, err := jpeg.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("part %d: decode: %v", parts, err)
		}
		return img
	}

	for range 3 {
		checkLED(t, "frame before any write", next(), false)
	}
	// Frames rendered before a write may still be in flight; a frame
	// rendered after it shows it, and from then on every frame does.
	for _, on := range []bool{true, false, true} {
		setLED(t, b, on)
		for i := 0; ; i++ {
			img := next()
			br := brightness(img, CameraLEDRegion)
			if (on && br > litAbove) || (!on && br < darkBelow) {
				break
			}
			if i == 100 {
				t.Fatalf("100 frames after setting the LED %v, the stream still shows it %v (brightness %.3f)", on, !on, br)
			}
		}
		for range 2 {
			checkLED(t, fmt.Sprintf("frame after LED %v", on), next(), on)
		}
	}
}

func TestCameraStreamEndsWhenClientLeaves(t *testing.T) {
	_, c := newCamera(t)
	resp := get(t, http.MethodGet, c.URL()+CameraStreamPath)
	if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	waitCameraGoroutines(t, "sim.(*Camera).stream", "the client left")
}

func TestCameraCloseEndsStream(t *testing.T) {
	tests := []struct {
		name  string
		close func(*Board, *Camera) error
	}{
		{"camera close", func(_ *Board, c *Camera) error { return c.Close() }},
		{"board close", func(b *Board, _ *Camera) error { return b.Close() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, c := newCamera(t)
			resp := get(t, http.MethodGet, c.URL()+CameraStreamPath)
			br := bufio.NewReader(resp.Body)
			if _, err := br.ReadString('\n'); err != nil {
				t.Fatal(err)
			}
			if err := tt.close(b, c); err != nil {
				t.Fatalf("close: %v", err)
			}
			waitCameraGoroutines(t, "sim.", "Close")
			// The response ends cleanly, not with a reset connection.
			if _, err := io.Copy(io.Discard, br); err != nil {
				t.Errorf("reading the rest of the stream: %v, want a clean end", err)
			}
			if resp, err := http.Get(c.URL() + CameraPNGPath); err == nil {
				resp.Body.Close()
				t.Error("GET after close succeeded, want the camera gone")
			}
			if err := c.Close(); err != nil {
				t.Errorf("second camera Close: %v", err)
			}
			if err := b.Close(); err != nil {
				t.Errorf("board Close: %v", err)
			}
		})
	}
}

// TestCameraCloseWithStuckClient checks that a client that stops reading
// cannot hold Close up: the stream handler blocked writing to it ends.
func TestCameraCloseWithStuckClient(t *testing.T) {
	b := New(Options{})
	defer b.Close()
	// Frames back to back fill the socket buffers in well under a second.
	c, err := b.startCamera("", time.Microsecond)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", strings.TrimPrefix(c.URL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET "+CameraStreamPath+" HTTP/1.1\r\nHost: camera\r\n\r\n"); err != nil {
		t.Fatal(err)
	}

	deadline := time.Now().Add(ioTimeout)
	for !streamBlockedWriting() {
		if time.Now().After(deadline) {
			t.Fatalf("stream never blocked writing to a client that does not read")
		}
		time.Sleep(10 * time.Millisecond)
	}

	done := make(chan error, 1)
	go func() { done <- c.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Close: %v", err)
		}
	case <-time.After(ioTimeout):
		t.Fatalf("Close still blocked after %v by a client that does not read", ioTimeout)
	}
	waitCameraGoroutines(t, "sim.", "Close")
}

// streamBlockedWriting reports whether a stream handler waits for its
// client's socket to take more data.
func streamBlockedWriting() bool {
	for _, g := range cameraGoroutines("sim.(*Camera).stream") {
		if strings.Contains(g, "waitWrite") {
			return true
		}
	}
	return false
}

func TestCameraRequests(t *testing.T) {
	tests := []struct {
		method, path string
		wantStatus   int
		wantType     string
	}{
		{http.MethodGet, "/", http.StatusNotFound, ""},
		{http.MethodGet, "/stream.mjpeg", http.StatusNotFound, ""},
		{http.MethodPost, CameraPNGPath, http.StatusMethodNotAllowed, ""},
		{http.MethodHead, CameraPNGPath, http.StatusOK, "image/png"},
		{http.MethodHead, CameraJPEGPath, http.StatusOK, "image/jpeg"},
		{http.MethodHead, CameraStreamPath, http.StatusOK, "multipart/x-mixed-replace; boundary=" + cameraBoundary},
	}
	_, c := newCamera(t)
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			resp := get(t, tt.method, c.URL()+tt.path)
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("status %s, want %d", resp.Status, tt.wantStatus)
			}
			if ct := resp.Header.Get("Content-Type"); tt.wantType != "" && ct != tt.wantType {
				t.Errorf("Content-Type %q, want %q", ct, tt.wantType)
			}
		})
	}
}

func TestStartCameraOnClosedBoard(t *testing.T) {
	b := New(Options{})
	b.Close()
	c, err := b.StartCamera("")
	if err == nil || c != nil {
		t.Fatalf("StartCamera on a closed board = %v, %v; want nil and an error", c, err)
	}
}

// ffmpegTimeout only keeps a hung ffmpeg from hanging the test.
const ffmpegTimeout = 30 * time.Second

// needFFmpeg skips the test when ffmpeg is missing, or fails it under CI.
func needFFmpeg(t *testing.T) {
	t.Helper()
	testenv.NeedTool(t, "ffmpeg", "apt-get install ffmpeg")
}

// ffmpegArgs returns the argv that captures frames from input into pattern,
// an image2 output such as dir/frame-%d.png; frames 0 means until the input
// ends. It is the argv hilrun's capture step runs.
func ffmpegArgs(format []string, input, pattern string, frames int) []string {
	args := []string{"-nostdin", "-hide_banner", "-loglevel", "error"}
	args = append(args, format...)
	args = append(args, "-i", input)
	if frames > 0 {
		args = append(args, "-frames:v", strconv.Itoa(frames))
	}
	return append(args, "-y", pattern)
}

func runFFmpeg(t *testing.T, args []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), ffmpegTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ffmpeg", args...).CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("ffmpeg %s: still running after %v", strings.Join(args, " "), ffmpegTimeout)
	}
	if err != nil {
		t.Fatalf("ffmpeg %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func readPNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	return img
}

// TestFFmpegCapturesStream captures the stream with the real ffmpeg, as
// hilrun's capture step does, and checks the PNGs show the LED as set.
func TestFFmpegCapturesStream(t *testing.T) {
	needFFmpeg(t)
	tests := []struct {
		name   string
		format []string
	}{
		{"mpjpeg", []string{"-f", "mpjpeg"}},
		{"probed", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, c := newCamera(t)
			dir := t.TempDir()
			for _, on := range []bool{true, false} {
				setLED(t, b, on)
				prefix := filepath.Join(dir, fmt.Sprintf("led-%v-", on))
				runFFmpeg(t, ffmpegArgs(tt.format, c.URL()+CameraStreamPath, prefix+"%d.png", 2))
				for i := 1; i <= 2; i++ {
					checkLED(t, fmt.Sprintf("capture %d with LED %v", i, on), readPNG(t, fmt.Sprintf("%s%d.png", prefix, i)), on)
				}
			}
		})
	}
}

func TestFFmpegReadsStills(t *testing.T) {
	needFFmpeg(t)
	for _, path := range []string{CameraPNGPath, CameraJPEGPath} {
		t.Run(strings.TrimPrefix(path, "/"), func(t *testing.T) {
			b, c := newCamera(t)
			setLED(t, b, true)
			out := filepath.Join(t.TempDir(), "frame.png")
			runFFmpeg(t, ffmpegArgs(nil, c.URL()+path, out, 1))
			checkLED(t, "capture", readPNG(t, out), true)
		})
	}
}

// TestFFmpegEndsWhenCameraCloses checks that closing the camera or the
// board ends the input of an ffmpeg reading the stream with no frame limit:
// ffmpeg finishes normally instead of hanging.
func TestFFmpegEndsWhenCameraCloses(t *testing.T) {
	needFFmpeg(t)
	tests := []struct {
		name  string
		close func(*Board, *Camera) error
	}{
		{"camera close", func(_ *Board, c *Camera) error { return c.Close() }},
		{"board close", func(b *Board, _ *Camera) error { return b.Close() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, c := newCamera(t)
			dir := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), ffmpegTimeout)
			defer cancel()
			var out strings.Builder
			cmd := exec.CommandContext(ctx, "ffmpeg", ffmpegArgs([]string{"-f", "mpjpeg"}, c.URL()+CameraStreamPath, filepath.Join(dir, "f-%d.png"), 0)...)
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waitErr := make(chan error, 1)
			go func() { waitErr <- cmd.Wait() }()

			// Once the second file exists, ffmpeg is streaming.
			for {
				if _, err := os.Stat(filepath.Join(dir, "f-2.png")); err == nil {
					break
				} else if !errors.Is(err, os.ErrNotExist) {
					t.Fatal(err)
				}
				select {
				case err := <-waitErr:
					t.Fatalf("ffmpeg ended before the camera closed: %v\n%s", err, out.String())
				case <-time.After(20 * time.Millisecond):
				}
			}
			if err := tt.close(b, c); err != nil {
				t.Fatalf("close: %v", err)
			}
			err := <-waitErr
			if ctx.Err() != nil {
				t.Fatalf("ffmpeg still running %v after the camera closed", ffmpegTimeout)
			}
			if err != nil {
				t.Fatalf("ffmpeg: %v\n%s", err, out.String())
			}
		})
	}
}
