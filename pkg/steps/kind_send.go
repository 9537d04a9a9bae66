package steps

import (
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/hilrun/hilrun/pkg/stream"
)

// KindSend sends text (send:, with ${var} and the device's line ending)
// or bytes (send_hex:, send_ctrl:) to a console, and with expect: waits
// for the reply. See Step.Text, Step.Bytes and Step.WaitPrompt.
const KindSend Kind = "send"

func init() {
	registerKind(KindSpec{
		Kind:    KindSend,
		On:      OnDevice,
		Keys:    []string{"send", "send_hex", "send_ctrl"},
		Caps:    CapDevice,
		Doc:     "send text or bytes to a console, optionally expect a reply",
		Allowed: []string{"to", "expect", "regex", "save", "timeout", "read_timeout", "line_ending", "fail_on", "settle", "wait_prompt", "until_prompt"},
		decode: func(d *decoder, s *Step, key string, v *yaml.Node) bool {
			fn, ok := sendFields[key]
			if ok {
				fn(d, s, v)
			}
			return ok
		},
		finish: finishSend,
		check: func(v *validator, s *Step) {
			v.sendable = true
			v.template(s.Pos, s.Text)
			v.sendable = false
			v.expect(s)
		},
		title: func(s *Step) string {
			if s.Text != nil {
				if s.Text.Raw == "" {
					return `""`
				}
				return clip(s.Text.Raw)
			}
			return clip(stream.Quote(s.Bytes))
		},
	})
}

// sendFields decode the keys only a send step has.
var sendFields = map[string]func(d *decoder, s *Step, v *yaml.Node){
	"send":      func(d *decoder, s *Step, v *yaml.Node) { s.Text, _ = d.template(v, "send") },
	"send_hex":  (*decoder).sendHex,
	"send_ctrl": (*decoder).sendCtrl,
	"read_timeout": func(d *decoder, s *Step, v *yaml.Node) {
		s.Timeout, _ = d.numberIn(v, "read_timeout (seconds)", time.Second, timeoutRange)
	},
	"line_ending": func(d *decoder, s *Step, v *yaml.Node) { s.LineEnding = d.lineEnding(v) },
	"wait_prompt": func(d *decoder, s *Step, v *yaml.Node) { s.WaitPrompt = d.optBool(v, "wait_prompt") },
}

// sendHex reads send_hex: pairs of hex digits, spaces, colons and dashes
// between them ignored.
func (d *decoder) sendHex(s *Step, v *yaml.Node) {
	str, ok := d.text(v, "send_hex")
	if !ok {
		return
	}
	clean := strings.NewReplacer(" ", "", ":", "", "-", "", "0x", "", "\n", "").Replace(str)
	b, err := hex.DecodeString(clean)
	if err != nil || len(b) == 0 {
		d.add(d.pos(v), "send_hex %q is not hex bytes: expected pairs of hex digits like \"0d 0a ff\"", str)
		return
	}
	s.Bytes = b
}

// sendCtrl reads send_ctrl: a control key such as c (Ctrl-C).
func (d *decoder) sendCtrl(s *Step, v *yaml.Node) {
	str, ok := d.text(v, "send_ctrl")
	if !ok {
		return
	}
	b, err := ctrlByte(str)
	if err != nil {
		d.add(d.pos(v), "send_ctrl: %v", err)
		return
	}
	s.Bytes, s.Ctrl = []byte{b}, true
}

// finishSend checks the keys of a send step together: one way to say
// what to send, and the keys that need an expect.
func finishSend(d *decoder, s *Step, keys stepKeys) {
	has := keys.has
	n := 0
	for _, k := range []string{"send", "send_hex", "send_ctrl"} {
		if has[k] {
			n++
		}
	}
	if n > 1 {
		d.add(s.Pos, "a send step has one of send, send_hex or send_ctrl")
	}
	if has["send_ctrl"] && has["wait_prompt"] {
		d.add(s.Pos, "wait_prompt goes with send and send_hex: send_ctrl never waits for the prompt")
	}
	if has["until_prompt"] && !has["expect"] {
		d.add(s.Pos, "until_prompt needs an expect on the same step")
	}
	if len(s.Save) > 0 && !has["expect"] {
		d.add(s.Pos, "save needs an expect on the same step")
	}
}

// ctrlByte is the byte a control key sends: "c", "ctrl-c" and "^C" are
// 0x03.
func ctrlByte(s string) (byte, error) {
	t := strings.TrimPrefix(strings.TrimPrefix(strings.ToLower(strings.TrimSpace(s)), "ctrl-"), "^")
	if len(t) == 1 {
		c := t[0]
		switch {
		case c >= 'a' && c <= 'z':
			return c - 'a' + 1, nil
		case c == '@':
			return 0, nil
		case c == '[':
			return 0x1b, nil
		case c == '\\':
			return 0x1c, nil
		case c == ']':
			return 0x1d, nil
		case c == '^':
			return 0x1e, nil
		case c == '_':
			return 0x1f, nil
		}
	}
	return 0, fmt.Errorf("%q is not a control key: expected a letter such as c (Ctrl-C) or one of @ [ \\ ] ^ _", s)
}
