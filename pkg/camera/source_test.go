package camera

import (
	"slices"
	"strings"
	"testing"
)

func TestArgv(t *testing.T) {
	const head = "ffmpeg -nostdin -hide_banner -loglevel error -y "
	tests := []struct {
		name string
		src  Source
		n    int
		want string
	}{
		{
			name: "v4l2 index becomes a device path",
			src:  Source{Input: "2", Format: "v4l2", Size: "640x480"},
			n:    1,
			want: head + "-f v4l2 -video_size 640x480 -i /dev/video2 -frames:v 1 -threads 1 -atomic_writing 1 out/f-%d.png",
		},
		{
			name: "video4linux2 spelled out",
			src:  Source{Input: "0", Format: "video4linux2"},
			n:    2,
			want: head + "-f video4linux2 -i /dev/video0 -frames:v 2 -threads 1 -atomic_writing 1 out/f-%d.png",
		},
		{
			name: "avfoundation index stays an index",
			src:  Source{Input: "0", Format: "avfoundation", Size: "1280x720", InputArgs: []string{"-framerate", "30"}},
			n:    1,
			want: head + "-f avfoundation -video_size 1280x720 -framerate 30 -i 0 -frames:v 1 -threads 1 -atomic_writing 1 out/f-%d.png",
		},
		{
			name: "lavfi is scaled",
			src:  Source{Input: "testsrc=size=320x240:rate=25", Format: "lavfi", Size: "160x120"},
			n:    3,
			want: head + "-f lavfi -i testsrc=size=320x240:rate=25 -vf scale=160:120 -frames:v 3 -threads 1 -atomic_writing 1 out/f-%d.png",
		},
		{
			name: "URL is probed",
			src:  Source{Input: "rtsp://10.0.0.5:554/stream", InputArgs: []string{"-rtsp_transport", "tcp"}},
			n:    1,
			want: head + "-rtsp_transport tcp -i rtsp://10.0.0.5:554/stream -frames:v 1 -threads 1 -atomic_writing 1 out/f-%d.png",
		},
		{
			name: "file with a size and a binary",
			src:  Source{Input: "bench.mp4", Size: "64x48", FFmpeg: "/opt/ffmpeg/bin/ffmpeg"},
			n:    1,
			want: "/opt/ffmpeg/bin/ffmpeg -nostdin -hide_banner -loglevel error -y -i bench.mp4 -vf scale=64:48 -frames:v 1 -threads 1 -atomic_writing 1 out/f-%d.png",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := strings.Join(Argv(tt.src, tt.n, "out/f-%d.png"), " ")
			if got != tt.want {
				t.Errorf("Argv:\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestArgvDefaultFormat checks that a camera without a Format gets this
// platform's (v4l2 on Linux, avfoundation on macOS) and anything else is
// left for ffmpeg to probe.
func TestArgvDefaultFormat(t *testing.T) {
	formatOf := func(argv []string) string {
		if i := slices.Index(argv, "-f"); i >= 0 {
			return argv[i+1]
		}
		return ""
	}
	for _, in := range []string{"0", "/dev/video3"} {
		if got := formatOf(Argv(Source{Input: in}, 1, "x")); got != defaultDeviceFormat {
			t.Errorf("Argv(Input %q) uses format %q, want %q", in, got, defaultDeviceFormat)
		}
	}
	for _, in := range []string{"http://cam/video.mjpg", "rtsp://cam/1", "clip.mp4", "/tmp/clip.mp4"} {
		if got := formatOf(Argv(Source{Input: in}, 1, "x")); got != "" {
			t.Errorf("Argv(Input %q) uses format %q, want none", in, got)
		}
	}
}

func TestParseSize(t *testing.T) {
	for _, s := range []string{"640x480", "1x1"} {
		if _, _, err := parseSize(s); err != nil {
			t.Errorf("parseSize(%q): %v", s, err)
		}
	}
	for _, s := range []string{"640", "640x", "x480", "0x480", "-1x5", "640X480", "640x480x3", "a x b"} {
		if _, _, err := parseSize(s); err == nil || !strings.Contains(err.Error(), "such as 640x480") {
			t.Errorf("parseSize(%q) = %v, want an error showing the form", s, err)
		}
	}
}
