package steps

import (
	"time"

	"gopkg.in/yaml.v3"
)

// KindCapture records a console for a window: capture: 2s, or capture:
// {duration, idle_timeout, until, max_bytes, ...}; save: names one
// variable for the text. A capture that names a camera (capture: true,
// capture: {camera: ...}) is a KindCamera step: see isCameraCapture.
const KindCapture Kind = "capture"

func init() {
	registerKind(KindSpec{
		Kind:    KindCapture,
		On:      OnDevice,
		Keys:    []string{"capture"},
		Caps:    CapDevice,
		Doc:     "record a console for a window",
		Allowed: []string{"to", "save", "fail_on", "timeout", "settle"},
		decode: func(d *decoder, s *Step, key string, v *yaml.Node) bool {
			if key != "capture" {
				return false
			}
			s.Capture = d.capture(v)
			return true
		},
		finish: func(d *decoder, s *Step, _ stepKeys) {
			if len(s.Save) > 1 || len(s.Save) == 1 && s.Save[0].Group != -1 {
				d.add(s.Pos, "save on a capture names one variable for the captured text")
			}
		},
		check: func(v *validator, s *Step) {
			if s.Capture == nil {
				return
			}
			for _, p := range s.Capture.Until {
				v.pattern(p)
			}
			for _, sv := range s.Save {
				v.define(sv.Var)
			}
		},
		title: func(s *Step) string {
			if s.Capture != nil && s.Capture.Label != "" {
				return s.Capture.Label
			}
			return "capture"
		},
	})
}

// CaptureSpec is a serial capture window.
type CaptureSpec struct {
	Duration       time.Duration
	IdleTimeout    time.Duration
	InitialTimeout time.Duration
	Until          []*PatternSpec
	MaxBytes       int
	FirstByte      bool
	Label          string
}

// captureKeys are the keys of capture: {...}.
var captureKeys = []string{"duration", "idle_timeout", "initial_timeout", "until", "regex", "max_bytes", "start", "label"}

// capture reads a serial capture window: a duration, or a mapping of
// what ends it.
func (d *decoder) capture(v *yaml.Node) *CaptureSpec {
	c := &CaptureSpec{}
	if v.Kind == yaml.ScalarNode && v.Tag == "!!bool" {
		d.add(d.pos(v), "camera captures (capture: true) are not supported by this build of hilrun; for a serial capture window write capture: {duration: 2s}")
		return c
	}
	if v.Kind == yaml.ScalarNode && v.Tag != "!!null" {
		var ok bool
		if c.Duration, ok = d.durationIn(v, "capture", timeoutRange); ok && c.Duration == 0 {
			d.add(d.pos(v), "capture needs something that ends it: a duration above 0")
		}
		return c
	}
	if v.Kind != yaml.MappingNode {
		d.add(d.pos(v), "capture must be a duration or a mapping such as {duration: 2s, until: \"done\"}, found %s", kindName(v))
		return c
	}
	regex := false
	var until *yaml.Node
	for _, p := range d.pairs(v) {
		switch p.key.Value {
		case "duration":
			c.Duration, _ = d.durationIn(p.val, "duration", timeoutRange)
		case "idle_timeout":
			c.IdleTimeout, _ = d.durationIn(p.val, "idle_timeout", timeoutRange)
		case "initial_timeout":
			c.InitialTimeout, _ = d.durationIn(p.val, "initial_timeout", timeoutRange)
		case "until":
			until = p.val
		case "regex":
			regex, _ = d.boolean(p.val, "regex")
		case "max_bytes":
			c.MaxBytes, _ = d.integer(p.val, "max_bytes", 1, 1<<30)
		case "start":
			c.FirstByte = d.oneOf(p.val, "start", "immediate", "first_byte") == "first_byte"
		case "label":
			c.Label, _ = d.text(p.val, "label")
		default:
			d.unknownKey(p.key, "capture", captureKeys)
		}
	}
	if until != nil {
		c.Until = d.patternList(until, "until", regex)
	}
	if c.Duration == 0 && c.IdleTimeout == 0 && len(c.Until) == 0 && c.MaxBytes == 0 {
		d.add(d.pos(v), "capture needs something that ends it: duration, idle_timeout, until or max_bytes")
	}
	return c
}
