package camera_test

import (
	"fmt"
	"strings"

	"github.com/hilrun/hilrun/pkg/camera"
)

// Argv shows the ffmpeg command behind a capture. Format "" would pick v4l2
// on Linux and avfoundation on macOS for the cameras; here it is explicit
// so the output is the same everywhere.
func ExampleArgv() {
	for _, src := range []camera.Source{
		{Input: "2", Format: "v4l2", Size: "640x480", InputArgs: []string{"-input_format", "mjpeg"}},
		{Input: "0", Format: "avfoundation", Size: "1280x720", InputArgs: []string{"-framerate", "30"}},
		{Input: "testsrc=size=320x240:rate=25", Format: "lavfi"},
		{Input: "rtsp://10.0.0.5/stream", Size: "640x360"},
	} {
		fmt.Println(strings.Join(camera.Argv(src, 3, "logs/led-%d.png"), " "))
	}
	// Output:
	// ffmpeg -nostdin -hide_banner -loglevel error -y -f v4l2 -video_size 640x480 -input_format mjpeg -i /dev/video2 -frames:v 3 -threads 1 -atomic_writing 1 logs/led-%d.png
	// ffmpeg -nostdin -hide_banner -loglevel error -y -f avfoundation -video_size 1280x720 -framerate 30 -i 0 -frames:v 3 -threads 1 -atomic_writing 1 logs/led-%d.png
	// ffmpeg -nostdin -hide_banner -loglevel error -y -f lavfi -i testsrc=size=320x240:rate=25 -frames:v 3 -threads 1 -atomic_writing 1 logs/led-%d.png
	// ffmpeg -nostdin -hide_banner -loglevel error -y -i rtsp://10.0.0.5/stream -vf scale=640:360 -frames:v 3 -threads 1 -atomic_writing 1 logs/led-%d.png
}
