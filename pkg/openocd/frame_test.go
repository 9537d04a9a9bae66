package openocd

import (
	"reflect"
	"strings"
	"testing"
	"testing/quick"
	"unicode/utf8"
)

func TestTclQuote(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "mdw 0x20000000 4", "mdw 0x20000000 4"},
		{"braces stay", "write_memory 0x0 32 {1 2}", "write_memory 0x0 32 {1 2}"},
		{"substitutions", `return "$x [y] \z"`, `return \"\$x \[y\] \\z\"`},
		{"control characters", "a\nb\tc\rd\x01e\x7f", `a\nb\tc\rd\x01e\x7f`},
		{"beyond ASCII", "é→", `\u00e9\u2192`},
		{"unbalanced", `set x "{`, `set x \"{`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tclQuote(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("tclQuote(%q) = %q, want %q", tt.in, got, tt.want)
			}
			for _, c := range []byte(got) {
				if c < 0x20 || c > 0x7e {
					t.Errorf("tclQuote(%q) holds byte 0x%02x, which the telnet server drops", tt.in, c)
				}
			}
		})
	}
}

func TestTclQuoteRoundTrip(t *testing.T) {
	f := func(s string) bool {
		if !utf8.ValidString(s) {
			return true
		}
		for _, r := range s {
			if r > 0xffff {
				return true
			}
		}
		q, err := tclQuote(s)
		if err != nil {
			t.Errorf("tclQuote(%q): %v", s, err)
			return false
		}
		back, err := tclUnquote(q)
		if err != nil || back != s {
			t.Errorf("tclUnquote(tclQuote(%q)) = %q, %v", s, back, err)
			return false
		}
		return true
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 2000}); err != nil {
		t.Error(err)
	}
}

func TestTclWord(t *testing.T) {
	tests := []struct{ in, want string }{
		{"firmware/sim/sim.elf", "firmware/sim/sim.elf"},
		{"C:/fw/a-b_c+1.hex", "C:/fw/a-b_c+1.hex"},
		{"my firmware.elf", `"my firmware.elf"`},
		{`a$b[c]"d\e`, `"a\$b\[c\]\"d\\e"`},
		{"", `""`},
	}
	for _, tt := range tests {
		if got := tclWord(tt.in); got != tt.want {
			t.Errorf("tclWord(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestEncodeRequest(t *testing.T) {
	got, err := encodeRequest(7, `mdw 0x0`)
	if err != nil {
		t.Fatal(err)
	}
	if want := `_hilrun 7 "mdw 0x0"`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	want := `proc _hilrun {n c} {set r [catch {uplevel #0 $c} o]; set o [string map {\x00 \\0} $o]; return "\x02$n $r [string bytelength $o]\x03$o\x04$n"}; _hilrun 1 "version"`
	if got := handshake(1); got != want {
		t.Errorf("handshake(1):\ngot  %s\nwant %s", got, want)
	}
	fit := strings.Repeat("x", commandBudget)
	if _, err := encodeRequest(1<<63, fit); err != nil {
		t.Errorf("a command of commandBudget bytes must fit: %v", err)
	}
	if _, err := encodeRequest(1, fit+strings.Repeat("x", maxLine)); err == nil {
		t.Error("an overlong command must be refused")
	}
}

func TestParseFrame(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		want   reply
		n      int
		status int
	}{
		{name: "simple", in: "\x021 0 5\x03hello\x041\r\n", want: reply{1, 0, "hello"}, n: 14, status: frameOK},
		{name: "empty", in: "\x0212 -107 0\x03\x0412\r", want: reply{12, -107, ""}, n: 14, status: frameOK},
		{name: "CR LF is one newline", in: "\x023 0 4\x03a\r\nb\r\n\x043\r", want: reply{3, 0, "a\nb\n"}, n: 15, status: frameOK},
		{name: "a CR of its own stays", in: "\x023 0 3\x03a\r\r\n\x043\r", want: reply{3, 0, "a\r\n"}, n: 13, status: frameOK},
		{name: "control bytes in the output", in: "\x024 0 3\x03\x02\x03\x04\x044\r", want: reply{4, 0, "\x02\x03\x04"}, n: 12, status: frameOK},
		{name: "needs the byte after the trailer", in: "\x021 0 0\x03\x041", status: frameIncomplete},
		{name: "trailer of another request", in: "\x021 0 0\x03\x042\r", status: frameInvalid},
		{name: "output longer than said", in: "\x021 0 1\x03ab\x041\r", status: frameInvalid},
		{name: "letters in the header", in: "\x02x 0 1\x03a\x04x\r", status: frameInvalid},
		{name: "sequence zero", in: "\x020 0 1\x03a\x040\r", status: frameInvalid},
		{name: "huge length", in: "\x021 0 99999999999\x03", status: frameInvalid},
		{name: "endless digits", in: "\x02" + strings.Repeat("1", 30), status: frameInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, n, st := parseFrame([]byte(tt.in))
			if st != tt.status || (st == frameOK && (r != tt.want || n != tt.n)) {
				t.Errorf("parseFrame(%q) = %+v, %d, %d; want %+v, %d, %d", tt.in, r, n, st, tt.want, tt.n, tt.status)
			}
			if st != frameOK {
				return
			}
			// Every proper prefix is incomplete, never invalid.
			for i := 1; i < tt.n+1 && i < len(tt.in); i++ {
				if _, _, st := parseFrame([]byte(tt.in[:i])); st != frameIncomplete {
					t.Errorf("prefix %q: status %d, want incomplete", tt.in[:i], st)
				}
			}
		})
	}
}

// erase is what the telnet server sends to clear n characters of the
// prompt line before it prints a log message.
func erase(n int) string {
	return strings.Repeat("\b", n) + strings.Repeat(" ", n) + strings.Repeat("\b", n)
}

func TestDecoder(t *testing.T) {
	echo1 := `_hilrun 1 "mdw 0x0"`
	tests := []struct {
		name   string
		feeds  []string
		frames []reply
		lines  []noise
	}{
		{
			name:   "greeting, echo, frame, prompt",
			feeds:  []string{"\xff\xfb\x03\xff\xfb\x01\xff\xfd\x03\xff\xfe\x01Open On-Chip Debugger\r\n\r> " + echo1 + "\r\n\x00\x021 0 2\x03ok\x041\r\n\r> "},
			frames: []reply{{1, 0, "ok"}},
			lines:  []noise{{text: "Open On-Chip Debugger"}, {text: "> " + echo1, echo: 1}},
		},
		{
			name:   "telnet commands split across feeds",
			feeds:  []string{"\xff", "\xfb", "\x01a\xff\xff", "\xff\xfa\x18\x01\xff", "\xf0b\xff\xf1c\n"},
			frames: nil,
			lines:  []noise{{text: "a\xffbc"}},
		},
		{
			name: "log line while idle redraws the prompt",
			feeds: []string{"\r> ", erase(2), "Halt timed out", "\r\n", "> ",
				echo1 + "\r\n\x00", "target halted\r\n", "\x021 0 0\x03\x041", "\r\n"},
			frames: []reply{{1, 0, ""}},
			lines:  []noise{{text: "Halt timed out"}, {text: "> " + echo1, echo: 1}, {text: "target halted"}},
		},
		{
			name:   "log line erasing a partly echoed line",
			feeds:  []string{"\r> _hilrun 4", erase(len("> _hilrun 4")) + "note\r\n> _hilrun 4"},
			frames: nil,
			lines:  []noise{{text: "note"}},
		},
		{
			name:   "a stray STX is noise",
			feeds:  []string{"odd \x02 byte\r\n\x022 0 1\x03x\x042\r\n"},
			frames: []reply{{2, 0, "x"}},
			lines:  []noise{{text: "odd \x02 byte"}},
		},
		{
			name:   "two frames",
			feeds:  []string{"\x021 0 1\x03a\x041\r\n\r> \x022 1 1", "\x03b\x042\r\n"},
			frames: []reply{{1, 0, "a"}, {2, 1, "b"}},
		},
	}
	for _, tt := range tests {
		for _, bytewise := range []bool{false, true} {
			name := tt.name
			if bytewise {
				name += "/bytewise"
			}
			t.Run(name, func(t *testing.T) {
				var d decoder
				var frames []reply
				var lines []noise
				feed := func(s string) {
					d.feed([]byte(s))
					for {
						r, ok := d.next()
						if !ok {
							break
						}
						frames = append(frames, r)
					}
					lines = append(lines, d.takeLines()...)
				}
				for _, f := range tt.feeds {
					if bytewise {
						for i := range len(f) {
							feed(f[i : i+1])
						}
					} else {
						feed(f)
					}
				}
				if !reflect.DeepEqual(frames, tt.frames) {
					t.Errorf("frames %#v, want %#v", frames, tt.frames)
				}
				if !reflect.DeepEqual(lines, tt.lines) {
					t.Errorf("lines %#v, want %#v", lines, tt.lines)
				}
			})
		}
	}
}
