package sim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Paths the board's camera serves, relative to Camera.URL. Every frame is
// rendered when it is sent, from the LED state of that moment.
const (
	// CameraStreamPath is a Motion JPEG stream, as IP cameras serve it: a
	// multipart/x-mixed-replace response whose parts are JPEG frames, each
	// with a Content-Length, one every CameraFrameInterval until the client
	// disconnects or the camera closes. ffmpeg reads it with
	// `-f mpjpeg -i URL/stream.mjpg`.
	CameraStreamPath = "/stream.mjpg"
	// CameraJPEGPath is a single JPEG frame.
	CameraJPEGPath = "/frame.jpg"
	// CameraPNGPath is a single PNG frame, losslessly the rendered picture.
	CameraPNGPath = "/frame.png"
)

// CameraFrameInterval is the time between two frames of the stream: 12.5
// frames per second.
const CameraFrameInterval = 80 * time.Millisecond

// CameraJPEGQuality is the JPEG quality (1-100) of every JPEG frame.
const CameraJPEGQuality = 95

// cameraBoundary separates the parts of the stream.
const cameraBoundary = "hilrun-sim-frame"

// cameraWriteTimeout ends a response whose client has stopped reading.
const cameraWriteTimeout = 5 * time.Second

// cameraSendBuffer is the socket send buffer of each client connection, in
// bytes: a few frames. A live camera should drop, not queue, what a slow
// client cannot take; the kernel's default grows to megabytes, which at
// this frame rate holds tens of seconds of stale frames.
const cameraSendBuffer = 64 << 10

// cameraCloseGrace is how long Close lets streams end cleanly, so clients see
// the end of the response rather than a reset connection, before it drops
// the connections of clients too slow to take it.
const cameraCloseGrace = 500 * time.Millisecond

// Camera is a camera looking at a Board, served over HTTP on its own
// listener like an IP camera; see the Camera*Path constants for what it
// serves. Start one with Board.StartCamera. Its methods are safe for
// concurrent use.
type Camera struct {
	board    *Board
	url      string
	interval time.Duration // between frames of a stream
	srv      *http.Server
	done     chan struct{} // closed by Close: streams stop

	mu     sync.Mutex
	closed bool
	active sync.WaitGroup // the Serve goroutine and running handlers
}

// StartCamera starts a camera looking at the board and serving HTTP on addr,
// a host:port for net.Listen; "" means 127.0.0.1 on a free port. The camera
// works whether or not the board is started, and runs until Camera.Close or
// Board.Close. StartCamera fails on a closed board.
func (b *Board) StartCamera(addr string) (*Camera, error) {
	return b.startCamera(addr, CameraFrameInterval)
}

// startCamera is StartCamera with the stream's frame interval, which tests
// shorten to fill a client's buffers quickly.
func (b *Board) startCamera(addr string, interval time.Duration) (*Camera, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	b.life.Lock()
	defer b.life.Unlock()
	if b.closed {
		return nil, errors.New("start camera: board is closed")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("start camera: %w", err)
	}
	c := &Camera{
		board:    b,
		url:      "http://" + ln.Addr().String(),
		interval: interval,
		done:     make(chan struct{}),
	}
	c.srv = &http.Server{
		Handler:           http.HandlerFunc(c.serveHTTP),
		ReadHeaderTimeout: cameraWriteTimeout,
		// A client that goes away mid-frame is normal for a camera; the
		// server must not log it to the process's stderr.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	c.active.Add(1)
	go func() {
		defer c.active.Done()
		c.srv.Serve(smallSendBuffers{ln}) // returns ErrServerClosed once Close runs
	}()
	b.camMu.Lock()
	if b.cams == nil {
		b.cams = make(map[*Camera]struct{})
	}
	b.cams[c] = struct{}{}
	b.camMu.Unlock()
	return c, nil
}

// URL returns the camera's base URL, such as http://127.0.0.1:41234, with no
// trailing slash; append a Camera*Path to it.
func (c *Camera) URL() string {
	return c.url
}

// Close stops the camera: streams end after their current frame, the
// listener closes, and clients that take longer than half a second to
// receive the end of their response are disconnected. Close returns once
// every camera goroutine has done its work; none is left running. It may be
// called more than once; calls after the first return nil.
func (c *Camera) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	close(c.done)
	c.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), cameraCloseGrace)
	err := c.srv.Shutdown(ctx)
	cancel()
	if errors.Is(err, context.DeadlineExceeded) {
		err = c.srv.Close()
	}
	c.active.Wait()

	c.board.camMu.Lock()
	delete(c.board.cams, c)
	c.board.camMu.Unlock()
	if err != nil {
		return fmt.Errorf("close camera: %w", err)
	}
	return nil
}

// closeCameras closes every camera started on b, for Board.Close.
func (b *Board) closeCameras() error {
	b.camMu.Lock()
	cams := make([]*Camera, 0, len(b.cams))
	for c := range b.cams {
		cams = append(cams, c)
	}
	b.camMu.Unlock()
	var errs []error
	for _, c := range cams {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// enter registers a running handler; it reports false once Close has begun,
// when the handler must not start.
func (c *Camera) enter() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.active.Add(1)
	return true
}

func (c *Camera) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if !c.enter() {
		http.Error(w, "camera closed", http.StatusServiceUnavailable)
		return
	}
	defer c.active.Done()
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	switch r.URL.Path {
	case CameraStreamPath:
		c.stream(w, r)
	case CameraJPEGPath:
		c.still(w, r, "image/jpeg", encodeJPEG)
	case CameraPNGPath:
		c.still(w, r, "image/png", png.Encode)
	default:
		http.NotFound(w, r)
	}
}

// still sends one frame, encoded by enc.
func (c *Camera) still(w http.ResponseWriter, r *http.Request, contentType string, enc func(io.Writer, image.Image) error) {
	var buf bytes.Buffer
	if err := enc(&buf, c.board.Frame()); err != nil {
		http.Error(w, "encode frame: "+err.Error(), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	h.Set("Cache-Control", "no-store")
	if r.Method == http.MethodHead {
		return
	}
	http.NewResponseController(w).SetWriteDeadline(time.Now().Add(cameraWriteTimeout))
	w.Write(buf.Bytes())
}

// stream sends a frame every c.interval until the client goes away,
// a write fails or times out, or the camera closes.
func (c *Camera) stream(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "multipart/x-mixed-replace; boundary="+cameraBoundary)
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	rc := http.NewResponseController(w)
	tick := time.NewTicker(c.interval)
	defer tick.Stop()
	var buf bytes.Buffer
	for {
		buf.Reset()
		if err := encodeJPEG(&buf, c.board.Frame()); err != nil {
			return
		}
		rc.SetWriteDeadline(time.Now().Add(cameraWriteTimeout))
		if err := writePart(w, buf.Bytes()); err != nil {
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
		select {
		case <-tick.C:
		case <-r.Context().Done():
			return
		case <-c.done:
			return
		}
	}
}

// writePart writes one part of the stream: the boundary, the part's
// headers, the JPEG and the line end that precedes the next boundary.
func writePart(w io.Writer, jpg []byte) error {
	head := "--" + cameraBoundary + "\r\n" +
		"Content-Type: image/jpeg\r\n" +
		"Content-Length: " + strconv.Itoa(len(jpg)) + "\r\n\r\n"
	if _, err := io.WriteString(w, head); err != nil {
		return err
	}
	if _, err := w.Write(jpg); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\r\n")
	return err
}

// smallSendBuffers is a listener whose TCP connections have a send buffer of
// cameraSendBuffer bytes.
type smallSendBuffers struct {
	net.Listener
}

func (l smallSendBuffers) Accept() (net.Conn, error) {
	conn, err := l.Listener.Accept()
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetWriteBuffer(cameraSendBuffer) // best effort: a default buffer works too
	}
	return conn, err
}

func encodeJPEG(w io.Writer, img image.Image) error {
	return jpeg.Encode(w, img, &jpeg.Options{Quality: CameraJPEGQuality})
}
