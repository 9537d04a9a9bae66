package camera

import (
	"strings"
	"testing"
)

func TestArgvLinuxIndex(t *testing.T) {
	got := strings.Join(Argv(Source{Input: "2", Size: "640x480"}, 1, "o-%d.png"), " ")
	want := "ffmpeg -nostdin -hide_banner -loglevel error -y -f v4l2 -video_size 640x480 -i /dev/video2 -frames:v 1 -threads 1 -atomic_writing 1 o-%d.png"
	if got != want {
		t.Errorf("Argv:\n got %s\nwant %s", got, want)
	}
}
