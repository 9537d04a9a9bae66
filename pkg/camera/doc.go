// Package camera grabs frames from a camera looking at the board, for
// hilrun's capture step; pkg/imaging measures them for expect_image.
//
//	files, err := camera.Grab(ctx, camera.Source{Input: "/dev/video2", Size: "640x480"}, 1, logDir, "led")
//	// files == []string{logDir + "/led.png"}; a second call gives led-2.png
//
// Frames come from ffmpeg, run as an argument vector (no shell) in a process
// group of its own that is killed as a whole when the context ends. The
// command Grab runs for a Source is what Argv returns:
//
//	Source{Input: "/dev/video2", Size: "640x480"} on Linux:
//	ffmpeg -nostdin -hide_banner -loglevel error -y -f v4l2 -video_size 640x480 -i /dev/video2 -frames:v 1 -threads 1 -atomic_writing 1 OUT
//	Source{Input: "0", InputArgs: []string{"-framerate", "30"}} on macOS:
//	ffmpeg -nostdin -hide_banner -loglevel error -y -f avfoundation -framerate 30 -i 0 -frames:v 1 -threads 1 -atomic_writing 1 OUT
//
// Grab's errors are *Error, whose Kind says what went wrong: they are all
// the bench's or the sequence's problems, never a failed test.
package camera
