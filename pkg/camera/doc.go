// Package camera grabs frames from a camera looking at the board and
// measures them, for hilrun's capture step and expect_image check.
//
//	files, err := camera.Grab(ctx, camera.Source{Input: "/dev/video2", Size: "640x480"}, 1, logDir, "led")
//	// files == []string{logDir + "/led.png"}; a second call gives led-2.png
//	img, err := camera.Load(files[0])
//	m, err := camera.Measure(img, camera.Rect{X: 300, Y: 200, W: 20, H: 20})
//	// m.Brightness == 0.83: the LED is on
//	red, _ := camera.ParseColor("red")
//	// camera.Distance(m.Mean, red) == 0.12: and it is red
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
// the bench's or the sequence's problems, never a failed test. Measure,
// ParseColor and Distance are pure functions over decoded images and
// colours; Load decodes a PNG or JPEG file.
//
// The package imports no other hilrun package.
package camera
