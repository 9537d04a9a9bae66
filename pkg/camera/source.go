package camera

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hilrun/hilrun/pkg/gate/process"
)

// Source says where frames come from.
type Source struct {
	// Input is a device path ("/dev/video2"), a bare index ("0": /dev/video0
	// with v4l2, device 0 with avfoundation), a URL or file path that ffmpeg
	// opens itself ("rtsp://10.0.0.5/stream", "http://cam/mjpg",
	// "bench.mp4") or, with Format "lavfi", a filter graph such as
	// "testsrc=size=320x240:rate=10".
	Input string
	// Format is ffmpeg's input format (-f). "" picks v4l2 on Linux and
	// avfoundation on macOS for device paths and indexes, and nothing
	// (ffmpeg probes) for anything else. Elsewhere, a camera needs a
	// Format.
	Format string
	// Size such as "640x480", in pixels: asked of a camera with -video_size
	// (a camera that cannot deliver it makes ffmpeg fail); frames from
	// other inputs are scaled to it. "" keeps the camera's or stream's
	// size.
	Size string
	// FFmpeg is the ffmpeg binary, a name looked up on PATH or a path; ""
	// means "ffmpeg".
	FFmpeg string
	// InputArgs are extra ffmpeg arguments placed just before -i, after
	// those Source makes, so they can override them: "-framerate", "30"
	// (most Mac cameras refuse avfoundation's default of 29.97),
	// "-input_format", "mjpeg" (high resolutions over USB 2), "-re" (read
	// a file or filter graph at its own pace), "-rtsp_transport", "tcp".
	InputArgs []string
	// Procs is the process gate's policy ffmpeg starts under; its
	// environment is ffmpeg's whole environment. A server that runs
	// captures for others passes a minimal one: what ffmpeg can read, such
	// as /proc/self/environ, must not hold the server's secrets. The zero
	// policy starts nothing.
	Procs process.Policy
}

// deviceFormats are the input formats that open cameras, which are asked
// for a size rather than having their frames scaled.
var deviceFormats = map[string]bool{
	"v4l2":         true,
	"video4linux2": true,
	"avfoundation": true,
	"dshow":        true,
}

// input is what a Source resolves to on this machine.
type input struct {
	format string // ffmpeg's -f, or "" to let it probe
	name   string // ffmpeg's -i
	device bool   // a camera, asked for a size
	v4l2   bool   // a Linux camera, whose device file can be checked
}

func (s Source) resolve() input {
	in := input{format: s.Format, name: s.Input}
	index := isIndex(s.Input)
	if in.format == "" && (index || strings.HasPrefix(s.Input, "/dev/")) {
		in.format = defaultDeviceFormat
	}
	in.device = deviceFormats[in.format]
	in.v4l2 = in.format == "v4l2" || in.format == "video4linux2"
	if index && in.v4l2 {
		in.name = "/dev/video" + s.Input
	}
	return in
}

// describe names the source in error messages.
func (in input) describe() string {
	switch in.format {
	case "lavfi":
		return "filter graph " + strconv.Quote(in.name)
	case "avfoundation", "dshow":
		return in.format + " camera " + strconv.Quote(in.name)
	}
	return in.name
}

// isIndex reports whether s is a camera number such as "0" or "12".
func isIndex(s string) bool {
	if s == "" || len(s) > 4 {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// Argv returns the command Grab runs to capture n frames from src into
// outPattern, an image2 file name pattern such as "dir/frame-%d.png" (the
// frames are numbered from 1). Argv[0] is the binary as Source.FFmpeg
// names it, before any PATH lookup. Argv does not check src; Grab does.
func Argv(src Source, n int, outPattern string) []string {
	bin := src.FFmpeg
	if bin == "" {
		bin = "ffmpeg"
	}
	in := src.resolve()
	argv := []string{bin, "-nostdin", "-hide_banner", "-loglevel", "error", "-y"}
	if in.format != "" {
		argv = append(argv, "-f", in.format)
	}
	if src.Size != "" && in.device {
		argv = append(argv, "-video_size", src.Size)
	}
	argv = append(argv, src.InputArgs...)
	argv = append(argv, "-i", in.name)
	if src.Size != "" && !in.device {
		argv = append(argv, "-vf", "scale="+strings.Replace(src.Size, "x", ":", 1))
	}
	// -threads 1 stops the PNG encoder from holding a frame per thread
	// (one per CPU) before writing any, which a kill would lose.
	// -atomic_writing has the image2 muxer write each frame under a
	// temporary name and rename it, so a kill never leaves half a PNG.
	return append(argv, "-frames:v", strconv.Itoa(n), "-threads", "1", "-atomic_writing", "1", outPattern)
}

// parseSize checks a Size such as "640x480".
func parseSize(s string) (w, h int, err error) {
	ws, hs, ok := strings.Cut(s, "x")
	if ok {
		w, err = strconv.Atoi(ws)
		if err == nil {
			h, err = strconv.Atoi(hs)
		}
	}
	if !ok || err != nil || w <= 0 || h <= 0 {
		return 0, 0, fmt.Errorf("size %q: want width x height in pixels, such as 640x480", s)
	}
	return w, h, nil
}
