package camera

import "strconv"

// ErrorKind says what kept Grab from capturing, or what was wrong with a
// region or colour.
type ErrorKind int

const (
	// NoFFmpeg: the ffmpeg binary was not found or could not be run.
	NoFFmpeg ErrorKind = iota + 1
	// NoCamera: the camera's device file does not exist (checked for v4l2
	// cameras before ffmpeg runs).
	NoCamera
	// Failed: ffmpeg exited with an error status, or the frames could not
	// be stored. The message carries the end of ffmpeg's stderr.
	Failed
	// Timeout: the context's deadline passed before all frames arrived.
	// The error wraps context.DeadlineExceeded.
	Timeout
	// Canceled: the context was cancelled before all frames arrived. The
	// error wraps context.Canceled.
	Canceled
	// Incomplete: ffmpeg exited successfully but wrote fewer frames than
	// asked, as a stream or file that ends early does.
	Incomplete
	// Invalid: an argument was wrong: the frame count, the base name or
	// Size. It is the sequence's fault rather than the bench's.
	Invalid
)

var kindNames = map[ErrorKind]string{
	NoFFmpeg:   "no ffmpeg",
	NoCamera:   "no camera",
	Failed:     "ffmpeg failed",
	Timeout:    "timeout",
	Canceled:   "canceled",
	Incomplete: "incomplete",
	Invalid:    "invalid",
}

func (k ErrorKind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return "ErrorKind(" + strconv.Itoa(int(k)) + ")"
}

// Error is the error of Grab. Its message is
// written for the bench engineer; callers branch on Kind with errors.As:
//
//	var ce *camera.Error
//	if errors.As(err, &ce) && ce.Kind == camera.NoCamera { ... }
type Error struct {
	Kind ErrorKind
	// Argv is the ffmpeg command, when one ran. Its output pattern names
	// a working directory that Grab has removed by the time it returns.
	Argv []string
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }

func (e *Error) Unwrap() error { return e.Err }
