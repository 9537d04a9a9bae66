package steps

import (
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/hilrun/hilrun/pkg/imaging"
)

// This file decodes the bench-control steps: camera captures and image
// checks, modem lines, break, reset sequences, host commands and power;
// and the cameras and power sections of sequences and bench files.

// cameraKeys are the keys of capture: {...} for a camera, also accepted
// beside capture: true.
var cameraKeys = []string{"camera", "device_index", "label", "frames", "size"}

// isCameraCapture tells a camera capture (capture: true, the seed's form,
// or a mapping naming a camera) from a serial capture window.
func isCameraCapture(v *yaml.Node, ps []pair) bool {
	if v.Kind == yaml.ScalarNode && v.Tag == "!!bool" {
		return true
	}
	if v.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(v.Content); i += 2 {
			k := v.Content[i].Value
			if k == "camera" || k == "frames" || k == "size" || k == "device_index" {
				return true
			}
		}
	}
	for _, p := range ps {
		if p.key.Value == "device_index" || p.key.Value == "camera" || p.key.Value == "expect_image" {
			return true
		}
	}
	return false
}

// controlField decodes the keys of the bench-control steps; it reports
// whether k was one.
func (d *decoder) controlField(s *Step, k string, v *yaml.Node) bool {
	switch s.Kind {
	case KindCamera:
		if s.Camera == nil {
			s.Camera = &CameraSpec{}
		}
		switch k {
		case "capture":
			if v.Kind == yaml.ScalarNode && v.Tag == "!!bool" {
				if b, _ := d.boolean(v, "capture"); !b {
					d.add(d.pos(v), "capture must be true or a mapping such as {camera: board, label: led}")
				}
				return true
			}
			if v.Kind != yaml.MappingNode {
				d.add(d.pos(v), "a camera capture is capture: true or a mapping such as {camera: board, label: led, frames: 3}, found %s", kindName(v))
				return true
			}
			for _, p := range d.pairs(v) {
				if !slices.Contains(cameraKeys, p.key.Value) {
					d.unknownKey(p.key, "a camera capture", cameraKeys)
					continue
				}
				d.cameraField(s.Camera, p.key.Value, p.val)
			}
		case "expect_image":
			s.Camera.Checks = d.imageChecks(v)
		case "camera", "device_index", "label", "frames", "size":
			d.cameraField(s.Camera, k, v)
		default:
			return false
		}
		return true
	}
	return false
}

func (d *decoder) cameraField(c *CameraSpec, k string, v *yaml.Node) {
	switch k {
	case "camera", "device_index":
		if c.Camera != "" {
			d.add(d.pos(v), "give the camera once, as camera: or device_index:")
			return
		}
		if v.Kind == yaml.ScalarNode && v.Tag == "!!int" {
			n, ok := d.integer(v, k, 0, 255)
			if ok {
				c.Camera = strconv.Itoa(n)
			}
			return
		}
		if k == "device_index" {
			d.add(d.pos(v), "device_index must be a camera number such as 0, found %s", kindName(v))
			return
		}
		c.Camera, _ = d.str(v, "camera")
	case "label":
		if l, ok := d.text(v, "label"); ok {
			if !validLabel(l) {
				d.add(d.pos(v), "label %q names picture files: use letters, digits, '-', '_' and '.'", l)
			} else {
				c.Label = l
			}
		}
	case "frames":
		c.Frames, _ = d.integer(v, "frames", 1, 1000)
	case "size":
		if sz, ok := d.str(v, "size"); ok {
			if !validSize(sz) {
				d.add(d.pos(v), "size %q must be WIDTHxHEIGHT, like 640x480", sz)
			} else {
				c.Size = sz
			}
		}
	}
}

func validLabel(s string) bool {
	if s == "" || s == "." || s == ".." || len(s) > 100 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

func validSize(s string) bool {
	w, h, ok := strings.Cut(s, "x")
	wi, err1 := strconv.Atoi(w)
	hi, err2 := strconv.Atoi(h)
	return ok && err1 == nil && err2 == nil && wi > 0 && hi > 0 && wi <= 16384 && hi <= 16384
}

var imageCheckKeys = []string{"region", "brightness", "color", "colour", "tolerance"}

// imageChecks reads expect_image: one check or a list of them.
func (d *decoder) imageChecks(v *yaml.Node) []*ImageCheck {
	if v.Kind == yaml.SequenceNode {
		var out []*ImageCheck
		for _, c := range v.Content {
			if ch := d.imageCheck(resolve(c)); ch != nil {
				out = append(out, ch)
			}
		}
		if len(out) == 0 && len(v.Content) == 0 {
			d.add(d.pos(v), "expect_image needs at least one check")
		}
		return out
	}
	if ch := d.imageCheck(v); ch != nil {
		return []*ImageCheck{ch}
	}
	return nil
}

func (d *decoder) imageCheck(v *yaml.Node) *ImageCheck {
	if v.Kind != yaml.MappingNode {
		d.add(d.pos(v), "expect_image must be a mapping such as {region: [10, 20, 8, 8], brightness: \">0.6\"}, found %s", kindName(v))
		return nil
	}
	c := &ImageCheck{Pos: d.pos(v)}
	bounded := false
	for _, p := range d.pairs(v) {
		switch p.key.Value {
		case "brightness", "color", "colour":
			bounded = true
		}
		switch p.key.Value {
		case "region":
			c.Region = d.region(p.val)
		case "brightness":
			c.Brightness = d.bounds(p.val)
		case "color", "colour":
			if c.Color != nil {
				d.add(d.pos(p.key), "give color once")
				continue
			}
			if s, ok := d.text(p.val, p.key.Value); ok {
				rgb, err := imaging.ParseColor(s)
				if err != nil {
					d.add(d.pos(p.val), "%s: %v", p.key.Value, err)
					continue
				}
				c.Color, c.ColorText = &rgb, s
			}
		case "tolerance":
			if f, ok := d.number(p.val, "tolerance"); ok {
				if f <= 0 || f > 1 {
					d.add(d.pos(p.val), "tolerance is a colour distance above 0 and at most 1, found %s", p.val.Value)
				}
				c.Tolerance = f
			}
		default:
			d.unknownKey(p.key, "expect_image", imageCheckKeys)
		}
	}
	if !bounded {
		d.add(c.Pos, "expect_image needs brightness: (like \">0.6\") or color: (like \"#00ff00\")")
	}
	if c.Tolerance != 0 && c.Color == nil {
		d.add(c.Pos, "tolerance goes with color:")
	}
	return c
}

func (d *decoder) region(v *yaml.Node) imaging.Rect {
	if v.Kind != yaml.SequenceNode || len(v.Content) != 4 {
		d.add(d.pos(v), "region must be [x, y, width, height] in pixels, found %s", kindName(v))
		return imaging.Rect{}
	}
	var n [4]int
	for i, c := range v.Content {
		lo := 0
		if i >= 2 {
			lo = 1
		}
		var ok bool
		if n[i], ok = d.integer(resolve(c), [4]string{"region x", "region y", "region width", "region height"}[i], lo, 65535); !ok {
			return imaging.Rect{}
		}
	}
	return imaging.Rect{X: n[0], Y: n[1], W: n[2], H: n[3]}
}

// bounds reads brightness: ">0.6", "<0.3", a number (at least), or a list
// of bounds that must all hold (">0.2", "<0.8").
func (d *decoder) bounds(v *yaml.Node) []imaging.Compare {
	nodes := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		nodes = v.Content
	}
	var out []imaging.Compare
	for _, n := range nodes {
		n = resolve(n)
		s, ok := d.text(n, "brightness")
		if !ok {
			continue
		}
		c, err := imaging.ParseCompare(s)
		if err != nil {
			d.add(d.pos(n), "brightness: %v", err)
			continue
		}
		out = append(out, c)
	}
	if len(out) == 0 && v.Kind == yaml.SequenceNode {
		d.add(d.pos(v), "brightness needs at least one bound")
	}
	return out
}

func (d *decoder) env(v *yaml.Node) map[string]*Template {
	if v.Kind != yaml.MappingNode {
		d.add(d.pos(v), "env must map variable names to values, found %s", kindName(v))
		return nil
	}
	env := map[string]*Template{}
	for _, e := range d.pairs(v) {
		if e.key.Value == "" || strings.ContainsAny(e.key.Value, "=\x00") {
			d.add(d.pos(e.key), "env: %q is not an environment variable name", e.key.Value)
			continue
		}
		if t, ok := d.template(e.val, "env "+e.key.Value); ok {
			env[e.key.Value] = t
		}
	}
	return env
}

// finishControl checks what depends on several keys of a bench-control
// step.
func (d *decoder) finishControl(s *Step, has map[string]bool) {
	switch s.Kind {
	case KindCamera:
		c := s.Camera
		if c == nil {
			return
		}
		if c.Frames == 0 {
			c.Frames = 1
		}
		if !has["capture"] && has["frames"] {
			d.add(s.Pos, "frames goes with capture:; expect_image alone checks one picture")
		}
	}
}

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

// TalksToDevice reports whether a step, as a mapping decoded from YAML or
// JSON, talks to a serial device (and so takes to:): send, expect, a
// serial capture, lines, break and reset_sequence do; memory, debugger,
// camera, exec, power, build and upload steps do not. Tools that fill in to: for steps use it.
func TalksToDevice(m map[string]any) bool {
	if v, ok := m["capture"]; ok && rawCameraCapture(v, m) {
		return false
	}
	device := false
	for key := range m {
		k, ok := kindKeys()[key]
		if !ok {
			continue
		}
		// expect also belongs to steps of other kinds, which win.
		if spec, _ := LookupKind(k); spec.On != OnDevice {
			return false
		}
		device = true
	}
	return device
}

// rawCameraCapture is isCameraCapture over a decoded mapping.
func rawCameraCapture(v any, siblings map[string]any) bool {
	if _, ok := v.(bool); ok {
		return true
	}
	if cm, ok := v.(map[string]any); ok {
		for _, k := range []string{"camera", "frames", "size", "device_index"} {
			if _, ok := cm[k]; ok {
				return true
			}
		}
	}
	for _, k := range []string{"device_index", "camera", "expect_image"} {
		if _, ok := siblings[k]; ok {
			return true
		}
	}
	return false
}
