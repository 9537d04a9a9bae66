package steps

import (
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// This file holds the cameras section of sequences and bench files: the
// cameras that camera steps (kind_camera.go) take pictures with.

// DefaultCamera is the name of the camera a capture without a camera uses
// in a sequence that declares none: the bench file or --sim binds it, and
// without them it is the first camera of the host (index 0).
const DefaultCamera = "camera"

// Camera returns the camera called name, or nil.
func (s *Sequence) Camera(name string) *Camera {
	for _, c := range s.Cameras {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// Camera is a camera looking at the board, read with ffmpeg.
type Camera struct {
	Name string
	// Input is a device (/dev/video2), an index ("0") or a URL (http://,
	// rtsp://); "" until the bench file or --sim binds it.
	Input string
	// Format is ffmpeg's input format (-f); "" picks the host's camera
	// driver for devices and lets ffmpeg probe URLs.
	Format string
	// Size such as 640x480; "" is the camera's default.
	Size string
	// Args are extra ffmpeg input arguments, placed before -i.
	Args []string
	// Implicit is true for a camera only named by steps.
	Implicit bool
	Pos      Pos
}

// cameraEntryKeys are the settings of a camera.
var cameraEntryKeys = []string{"input", "format", "size", "args"}

// cameras reads a cameras section: name to an input (a device, index or
// URL) or to {input, format, size, args}.
func (d *decoder) cameras(n *yaml.Node) {
	d.namedEntries(n, "cameras", "camera names to an input or settings", "camera name", func(name string, p pair) {
		c := &Camera{Name: name, Pos: d.pos(p.key)}
		switch {
		case p.val.Kind == yaml.ScalarNode && p.val.Tag != "!!null":
			c.Input = p.val.Value
		case p.val.Kind == yaml.MappingNode:
			for _, e := range d.pairs(p.val) {
				switch e.key.Value {
				case "input":
					c.Input, _ = d.text(e.val, "input")
				case "format":
					c.Format, _ = d.str(e.val, "format")
				case "size":
					if sz, ok := d.str(e.val, "size"); ok {
						if !validSize(sz) {
							d.add(d.pos(e.val), "size %q must be WIDTHxHEIGHT, like 640x480", sz)
						}
						c.Size = sz
					}
				case "args":
					c.Args = d.strings(e.val, "args")
				default:
					d.unknownKey(e.key, "camera "+name, cameraEntryKeys)
				}
			}
		case p.val.Tag != "!!null":
			d.add(d.pos(p.val), "camera %s must be an input such as /dev/video0 or a mapping such as {input: /dev/video2, size: 640x480}, found %s", name, kindName(p.val))
		}
		d.seq.Cameras = append(d.seq.Cameras, c)
	})
}

// validSize reports whether s is a picture size, WIDTHxHEIGHT.
func validSize(s string) bool {
	w, h, ok := strings.Cut(s, "x")
	wi, err1 := strconv.Atoi(w)
	hi, err2 := strconv.Atoi(h)
	return ok && err1 == nil && err2 == nil && wi > 0 && hi > 0 && wi <= 16384 && hi <= 16384
}

// resolveCameras gives every camera step its camera: a declared name, the
// only one declared, a camera index or device path or URL (an implicit
// camera), or in a sequence that declares none a name the bench binds.
func (v *validator) resolveCameras() {
	declared := len(v.seq.Cameras)
	var names []string
	for _, c := range v.seq.Cameras {
		names = append(names, c.Name)
	}
	Walk(v.seq, func(s *Step) {
		if s.Kind != KindCamera || s.Camera == nil {
			return
		}
		c := s.Camera
		switch {
		case c.Camera == "" && declared == 1:
			c.Camera = v.seq.Cameras[0].Name
		case c.Camera == "" && declared > 1:
			v.add(s.Pos, "this step needs camera: because the sequence has several cameras (%s)", strings.Join(names, ", "))
			return
		case c.Camera == "":
			c.Camera = DefaultCamera
		case v.seq.Camera(c.Camera) != nil:
			return
		case isCameraInput(c.Camera):
		case declared > 0:
			v.add(s.Pos, "camera: unknown camera %q; cameras are %s%s", c.Camera, strings.Join(names, ", "), suggest(c.Camera, names))
			return
		}
		if v.seq.Camera(c.Camera) != nil {
			return
		}
		cam := &Camera{Name: c.Camera, Implicit: true, Pos: s.Pos}
		switch {
		case c.Camera == DefaultCamera:
			// The host's first camera, unless the bench or --sim binds it.
			cam.Input = "0"
		case isCameraInput(c.Camera):
			cam.Input = c.Camera
		}
		v.seq.Cameras = append(v.seq.Cameras, cam)
	})
}

// isCameraInput reports whether a camera reference is an input (an index,
// a device path, a URL) rather than a name.
func isCameraInput(s string) bool {
	if _, err := strconv.Atoi(s); err == nil {
		return true
	}
	return strings.ContainsAny(s, "/:\\")
}
