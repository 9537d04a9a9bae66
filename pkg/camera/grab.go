package camera

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hilrun/hilrun/pkg/gate/process"
)

// installHint is how to get ffmpeg, for error messages.
const installHint = "install it (Debian/Ubuntu: apt-get install ffmpeg; macOS: brew install ffmpeg)"

// maxTakes bounds the search for free file names.
const maxTakes = 10000

// Grab captures n frames (n >= 1) from src and stores them as PNG files in
// dir, creating dir if needed. It returns the files' paths in frame order.
//
// The files are named after base (without ".png"): base.png for one frame,
// base-1.png to base-N.png for more. Grab never overwrites a file: when one
// of those names is taken, the capture is named as if base were base-2,
// then base-3 and so on (base-2.png, or base-2-1.png to base-2-N.png), so
// that a capture repeated with the same base keeps every picture. Names
// are claimed atomically, so concurrent Grabs into one dir do not collide.
//
// ffmpeg (Argv shows the command) runs without a shell, with stdin closed,
// in a process group of its own that is killed as a whole when ctx ends,
// so ctx bounds a camera that delivers nothing: give it a timeout. ffmpeg
// writes the frames into a hidden directory in dir first, and Grab moves
// them to their names when it exits.
//
// Errors are *Error. On a timeout, a cancellation, an ffmpeg failure or a
// capture that ends early, the frames written before it are still stored
// and returned along with the error.
func Grab(ctx context.Context, src Source, n int, dir, base string) ([]string, error) {
	return grab(ctx, src, n, dir, base, nil)
}

// grab is Grab, telling started, when not nil, the process id of ffmpeg,
// which is also its process group's.
func grab(ctx context.Context, src Source, n int, dir, base string, started func(pid int)) ([]string, error) {
	begin := time.Now()
	base = strings.TrimSuffix(base, ".png")
	in := src.resolve()
	if err := checkArgs(src, in, n, dir, base); err != nil {
		return nil, &Error{Kind: Invalid, Err: err}
	}
	if in.v4l2 && strings.HasPrefix(in.name, "/dev/") {
		if err := checkDevice(in.name); err != nil {
			return nil, &Error{Kind: NoCamera, Err: err}
		}
	}
	bin := src.FFmpeg
	if bin == "" {
		bin = "ffmpeg"
	}
	path, err := src.Procs.LookPath(bin, "")
	if err != nil {
		return nil, &Error{Kind: NoFFmpeg, Err: noFFmpeg(bin, err)}
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, &Error{Kind: Failed, Err: fmt.Errorf("capture from %s: %w", in.describe(), err)}
	}
	tmp, err := os.MkdirTemp(dir, "."+base+".capture-*")
	if err != nil {
		return nil, &Error{Kind: Failed, Err: fmt.Errorf("capture from %s: %w", in.describe(), err)}
	}
	defer os.RemoveAll(tmp)

	argv := Argv(src, n, filepath.Join(tmp, "frame-%d.png"))
	var stderr tailBuffer
	// ffmpeg starts no children, but should something in its group hold
	// stderr open, Wait gives up on it after this long.
	proc, runErr := src.Procs.Start(process.Spec{Purpose: process.Camera, Argv: argv, Stderr: &stderr, WaitDelay: time.Second})
	if runErr == nil {
		if started != nil {
			started(proc.Pid())
		}
		// SIGKILL rather than SIGTERM: a camera stuck in a driver call may
		// not let ffmpeg act on SIGTERM, and -atomic_writing means no frame
		// is left half written.
		stop := context.AfterFunc(ctx, func() { proc.Kill() })
		runErr = proc.Wait()
		stop()
		proc.Kill()
	}

	files, storeErr := store(tmp, dir, base, n)
	if runErr == nil && storeErr == nil && len(files) == n {
		return files, nil
	}
	fail := func(kind ErrorKind, err error) ([]string, error) {
		return files, &Error{Kind: kind, Argv: argv, Err: err}
	}
	desc := in.describe()
	if ctxErr := ctx.Err(); ctxErr != nil {
		took := time.Since(begin).Round(time.Millisecond)
		if cause := context.Cause(ctx); cause != ctxErr {
			ctxErr = fmt.Errorf("%w: %w", ctxErr, cause)
		}
		if errors.Is(ctxErr, context.DeadlineExceeded) {
			return fail(Timeout, fmt.Errorf("capture from %s timed out after %s with %d of %d frames written%s: %w",
				desc, took, len(files), n, noFrameHint(len(files)), ctxErr))
		}
		return fail(Canceled, fmt.Errorf("capture from %s canceled after %s with %d of %d frames written: %w",
			desc, took, len(files), n, ctxErr))
	}
	if proc == nil {
		return fail(NoFFmpeg, fmt.Errorf("run %s: %w", path, runErr))
	}
	if storeErr != nil {
		return fail(Failed, fmt.Errorf("capture from %s: store frames: %w", desc, storeErr))
	}
	if runErr != nil {
		msg := strings.Join(stderr.lines(5), "; ")
		if msg == "" {
			msg = "it printed nothing"
		}
		if in.v4l2 && strings.Contains(msg, "Permission denied") {
			msg += " (is this user in the video group?)"
		}
		return fail(Failed, fmt.Errorf("capture from %s: ffmpeg failed (%w) with %d of %d frames written: %s",
			desc, runErr, len(files), n, msg))
	}
	return fail(Incomplete, fmt.Errorf("capture from %s: ffmpeg wrote %d of %d frames and exited: did the stream end?",
		desc, len(files), n))
}

func noFrameHint(frames int) string {
	if frames == 0 {
		return " (no frame arrived: is the camera streaming?)"
	}
	return ""
}

// checkArgs reports what is wrong with Grab's arguments.
func checkArgs(src Source, in input, n int, dir, base string) error {
	switch {
	case n < 1:
		return fmt.Errorf("capture %d frames: want at least 1", n)
	case src.Input == "":
		return errors.New("capture: no input: set Source.Input to a camera, URL or filter graph")
	case dir == "":
		return errors.New("capture: no directory to store frames in")
	case base == "" || base == "." || base == ".." || strings.ContainsAny(base, `/\`):
		return fmt.Errorf("capture: frame name %q: want a file name without a directory, such as \"led\"", base)
	case in.format == "" && (isIndex(src.Input) || strings.HasPrefix(src.Input, "/dev/")):
		return fmt.Errorf("capture from %s: set Source.Format: there is no default camera format on %s", src.Input, runtime.GOOS)
	}
	if src.Size != "" {
		if _, _, err := parseSize(src.Size); err != nil {
			return fmt.Errorf("capture from %s: %w", in.describe(), err)
		}
	}
	return nil
}

// noFFmpeg explains why bin, which the process gate did not find, cannot
// be run.
func noFFmpeg(bin string, err error) error {
	var msg string
	switch {
	case errors.Is(err, fs.ErrPermission):
		msg = bin + " is not executable: " + installHint + " or correct Source.FFmpeg"
	case strings.ContainsAny(bin, `/\`):
		msg = bin + " not found: " + installHint + " or correct Source.FFmpeg"
	default:
		msg = bin + " not found on PATH: " + installHint
	}
	return &hintError{msg: msg, err: err}
}

// checkDevice reports a v4l2 camera's device file that is missing.
func checkDevice(name string) error {
	fi, err := os.Stat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		have, _ := filepath.Glob("/dev/video*")
		present := "this machine has none"
		if len(have) > 0 {
			present = "this machine has " + strings.Join(have, ", ")
		}
		return &hintError{
			msg: name + " does not exist: is the camera plugged in? (`ls /dev/video*` lists cameras; " + present + ")",
			err: err,
		}
	case err != nil:
		return fmt.Errorf("camera %w", err)
	case fi.Mode()&fs.ModeCharDevice == 0:
		return fmt.Errorf("%s is not a camera: it is not a character device", name)
	}
	return nil
}

// hintError says what to do about err, which it wraps without repeating.
type hintError struct {
	msg string
	err error
}

func (e *hintError) Error() string { return e.msg }

func (e *hintError) Unwrap() error { return e.err }

// store moves the frames ffmpeg wrote into tmp to free names in dir.
func store(tmp, dir, base string, n int) ([]string, error) {
	var written []string
	var frames []int
	for i := 1; i <= n; i++ {
		p := filepath.Join(tmp, "frame-"+strconv.Itoa(i)+".png")
		if _, err := os.Stat(p); err == nil {
			written = append(written, p)
			frames = append(frames, i)
		}
	}
	if len(frames) == 0 {
		return nil, nil
	}
	names, err := reserve(dir, base, n, frames)
	if err != nil {
		return nil, err
	}
	for i, p := range written {
		if err := os.Rename(p, names[i]); err != nil {
			for _, unused := range names[i:] {
				os.Remove(unused)
			}
			return names[:i], err
		}
	}
	return names, nil
}

// frameName is the file name of frame i (from 1) of n in the k-th capture
// (from 1) named base.
func frameName(base string, n, k, i int) string {
	stem := base
	if k > 1 {
		stem += "-" + strconv.Itoa(k)
	}
	if n > 1 {
		stem += "-" + strconv.Itoa(i)
	}
	return stem + ".png"
}

// reserve claims, by creating them empty, the names in dir of the given
// frames of an n-frame capture named base, in the first capture whose
// names for them are all free.
func reserve(dir, base string, n int, frames []int) ([]string, error) {
	for k := 1; k <= maxTakes; k++ {
		var made []string
		taken := false
		for _, i := range frames {
			p := filepath.Join(dir, frameName(base, n, k, i))
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
			if err != nil {
				for _, m := range made {
					os.Remove(m)
				}
				if errors.Is(err, fs.ErrExist) {
					taken = true
					break
				}
				return nil, err
			}
			f.Close()
			made = append(made, p)
		}
		if !taken {
			return made, nil
		}
	}
	return nil, fmt.Errorf("no free name for %s in %s after %d captures: clean the directory", base, dir, maxTakes)
}

// tailBuffer keeps the end of what ffmpeg writes to stderr.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

const tailMax = 4096

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*tailMax {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailMax:]...)
	}
	return len(p), nil
}

// lines returns the last n non-blank lines written, trimmed.
func (t *tailBuffer) lines(n int) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for _, l := range strings.Split(string(t.buf), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}
