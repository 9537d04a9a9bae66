package steps

import (
	"slices"
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/hilrun/hilrun/pkg/imaging"
)

// This file holds the camera kind: camera captures (capture: true,
// capture: {camera: ...}) and image checks (expect_image), one step or
// both together. The cameras section is in camera.go.

// KindCamera is a camera capture (capture: true, capture: {camera:
// ...}) or an image check (expect_image).
const KindCamera Kind = "camera"

func init() {
	registerKind(KindSpec{
		Kind:    KindCamera,
		Keys:    []string{"expect_image"},
		Caps:    CapCamera,
		Doc:     "take pictures (capture: true) and check them",
		Allowed: []string{"capture", "camera", "device_index", "label", "frames", "size", "timeout"},
		decode: func(d *decoder, s *Step, key string, v *yaml.Node) bool {
			if s.Camera == nil {
				s.Camera = &CameraSpec{}
			}
			switch key {
			case "capture":
				d.cameraCapture(s.Camera, v)
			case "expect_image":
				s.Camera.Checks = d.imageChecks(v)
			case "camera", "device_index", "label", "frames", "size":
				d.cameraField(s.Camera, key, v)
			default:
				return false
			}
			return true
		},
		finish: func(d *decoder, s *Step, keys stepKeys) {
			c := s.Camera
			if c == nil {
				return
			}
			if c.Frames == 0 {
				c.Frames = 1
			}
			if !keys.has["capture"] && keys.has["frames"] {
				d.add(s.Pos, "frames goes with capture:; expect_image alone checks one picture")
			}
		},
		title: func(s *Step) string {
			if s.Camera != nil && s.Camera.Label != "" {
				return s.Camera.Label
			}
			return s.Camera.Camera
		},
	})
}

// CameraSpec is a camera capture: Frames pictures from Camera, saved as
// PNG files named after Label, each checked against Checks.
type CameraSpec struct {
	Camera string
	Label  string
	Frames int
	// Size such as 640x480 overrides the camera's.
	Size   string
	Checks []*ImageCheck
}

// ImageCheck is an assertion over a region of a picture: its mean
// brightness within bounds, or its mean colour near Color.
type ImageCheck struct {
	Region     imaging.Rect
	Brightness []imaging.Compare
	Color      *imaging.RGB
	// ColorText is the colour as written.
	ColorText string
	// Tolerance is the largest colour Distance that passes; 0 means 0.25.
	Tolerance float64
	Pos       Pos
}

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

// cameraCapture reads a camera capture: capture: true, or a mapping of
// cameraKeys.
func (d *decoder) cameraCapture(c *CameraSpec, v *yaml.Node) {
	if v.Kind == yaml.ScalarNode && v.Tag == "!!bool" {
		if b, _ := d.boolean(v, "capture"); !b {
			d.add(d.pos(v), "capture must be true or a mapping such as {camera: board, label: led}")
		}
		return
	}
	if v.Kind != yaml.MappingNode {
		d.add(d.pos(v), "a camera capture is capture: true or a mapping such as {camera: board, label: led, frames: 3}, found %s", kindName(v))
		return
	}
	for _, p := range d.pairs(v) {
		if !slices.Contains(cameraKeys, p.key.Value) {
			d.unknownKey(p.key, "a camera capture", cameraKeys)
			continue
		}
		d.cameraField(c, p.key.Value, p.val)
	}
}

// cameraField reads one of cameraKeys, beside capture: or inside it.
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

// validLabel reports whether s can name picture files.
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

// imageCheckKeys are the keys of one image check.
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

// imageCheck reads one check: a region and its brightness or colour.
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

// region reads [x, y, width, height] in pixels.
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
