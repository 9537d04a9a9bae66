package steps_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/hilrun/hilrun/pkg/steps"
)

// sameAsText are sequences as JSON text that read the same through
// Parse, YAML's way, and through ParseValue: what YAML makes of numbers,
// text, durations and addresses holds for values too.
var sameAsText = []struct{ name, json string }{
	{"numbers and text", `{"steps": [{"send": "16", "expect": "16"}, {"send": "x", "expect": "0x10", "read_timeout": 2.5}]}`},
	{"durations", `{"timeout": "90s", "expect_timeout": "3s", "steps": [{"delay": "250ms"}, {"delay_ms": 500}, {"expect": "ok", "timeout": "2s"}]}`},
	{"hex addresses as text", `{"steps": [{"mem_write": true, "address": "0x48000418", "value": "0x40", "width": 32, "verify": true},
		{"mem_read": true, "address": "0x48000400", "count": 2, "expect": {"mask": "0x20", "value": "0x20"}}]}`},
	{"addresses as numbers", `{"steps": [{"mem_read": true, "address": 1207960576}, {"mem_write": true, "address": 536870912, "value": [1, 2, 3]}]}`},
	{"variables of every kind", `{"vars": {"s": "text", "n": 7, "f": 1.5, "big": 18446744073709551615, "huge": 1e999, "b": true, "none": null, "hex": "0x10"},
		"steps": [{"assert": "n + 1 == 8"}, {"send": "${s} ${hex}"}]}`},
	{"set keeps quoted text", `{"steps": [{"set": {"a": "1", "b": 2, "c": {"expr": "b + 1"}, "d": true}}, {"assert": "a == \"1\""}]}`},
	{"patterns", `{"fail_on": ["panic", {"regex": "err(or)?"}], "steps": [{"send": "v", "expect": {"regex": "v(\\d+)"}, "save": "major"}]}`},
	{"devices and prompt", `{"devices": {"dut": {"port": "/dev/ttyUSB0", "baud": 9600, "stop_bits": 2, "data_bits": 7, "prompt": "=> ", "echo": true}}, "steps": [{"send": "help", "to": "dut"}]}`},
	{"groups and repeats", `{"steps": [{"group": "boot", "steps": [{"expect": "ready"}]}, {"repeat": {"count": 3, "every": "10ms", "as": "i"}, "steps": [{"send": "${i}"}]}], "finally": [{"send_ctrl": "c"}]}`},
	{"a bare list of steps", `[{"send": "x"}, {"send_hex": "0d 0a ff"}]`},
	{"keys that need escaping", `{"vars": {"a": 1}, "steps": [{"send": "~/x"}]}`},
}

// reading is a sequence read from a JSON text through Parse (as YAML
// reads JSON) and through ParseValue.
type reading struct {
	how               string
	text, value       *steps.Sequence
	textErr, valueErr error
}

// readBoth reads a JSON text through Parse and ParseValue, as raw JSON and
// as decoded values, whose keys are sorted (as they are in the text Parse
// reads for them).
func readBoth(t *testing.T, src string) []reading {
	t.Helper()
	read := func(how, text string, v any) reading {
		r := reading{how: how}
		r.text, r.textErr = steps.Parse("<seq>.json", []byte(text), steps.LoadOptions{})
		r.value, r.valueErr = steps.ParseValue("<seq>", v, steps.LoadOptions{})
		return r
	}
	dec := json.NewDecoder(strings.NewReader(src))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	sorted, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return []reading{read("raw JSON", src, json.RawMessage(src)), read("values", string(sorted), v)}
}

func TestParseValueReadsAsTextDoes(t *testing.T) {
	for _, tc := range sameAsText {
		t.Run(tc.name, func(t *testing.T) {
			for _, r := range readBoth(t, tc.json) {
				if r.textErr != nil || r.valueErr != nil {
					t.Fatalf("%s: Parse: %v; ParseValue: %v", r.how, r.textErr, r.valueErr)
				}
				if a, b := dump(r.text), dump(r.value); a != b {
					t.Errorf("%s: ParseValue differs from Parse:\n text: %s\nvalue: %s", r.how, a, b)
				}
			}
		})
	}
}

// Every example sequence, written as JSON, reads the same both ways.
func TestParseValueReadsTheExamples(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "sequences", "*", "*"))
	n := 0
	for _, f := range files {
		if strings.Contains(f, "bench") || !(strings.HasSuffix(f, ".yaml") || strings.HasSuffix(f, ".json")) {
			continue
		}
		n++
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var v any
			if err := yaml.Unmarshal(data, &v); err != nil {
				t.Fatal(err)
			}
			src, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range readBoth(t, string(src)) {
				if r.textErr != nil || r.valueErr != nil {
					t.Fatalf("%s: Parse: %v; ParseValue: %v", r.how, r.textErr, r.valueErr)
				}
				if a, b := dump(r.text), dump(r.value); a != b {
					t.Errorf("%s: ParseValue differs from Parse:\n text: %s\nvalue: %s", r.how, a, b)
				}
			}
		})
	}
	if n < 5 {
		t.Fatalf("found %d example sequences, want more", n)
	}
}

func TestParseValueErrors(t *testing.T) {
	tests := []struct {
		name, json string
		want       []string // every problem, in order
	}{
		{"unknown key", `{"steps": [{"send": "x"}, {"send": "y", "expct": "z"}]}`,
			[]string{`seq: /steps/1/expct: unknown key "expct" in a send step (did you mean "expect"?)`}},
		{"a bare number for a duration", `{"steps": [{"expect": "ok", "timeout": 2}]}`,
			[]string{`seq: /steps/0/timeout: timeout must be a duration with a unit, like 2ms or 2s, found the bare number 2`}},
		{"text for a number", `{"devices": {"dut": {"port": "/dev/x", "baud": "9600"}}, "steps": [{"send": "x"}]}`,
			[]string{`seq: /devices/dut/baud: baud must be a whole number, found the text "9600"`}},
		{"problems in the order written", `{"steps": [{"send": "x", "zz": 1, "aa": 2}], "finally": [{"delay": 5}]}`,
			[]string{`seq: /steps/0/zz: unknown key "zz"`, `seq: /steps/0/aa: unknown key "aa"`, `seq: /finally/0/delay: delay must be a duration`}},
		{"nested steps", `{"steps": [{"group": "g", "steps": [{"delay": "1s"}, {"sned": "x"}]}]}`,
			[]string{`seq: /steps/0/steps/1: unknown step kind "sned"`}},
		{"keys escaped in pointers", `{"vars": {"a/b": 1, "c~d": 2}, "steps": [{"send": "x"}]}`,
			[]string{`seq: /vars/a~1b: variable name "a/b"`, `seq: /vars/c~0d: variable name "c~d"`}},
		{"the whole sequence", `{"name": "x"}`,
			[]string{`seq: the sequence has no steps`}},
		{"a step id used twice", `{"steps": [{"send": "x", "id": "a"}, {"send": "y", "id": "a"}]}`,
			[]string{`seq: /steps/1/id: id "a" is already used by the step at seq: /steps/0/id`}},
		{"invalid JSON", `{"steps": [{"send": "x"},]}`,
			[]string{`seq: /steps/1: invalid JSON: invalid character ']'`}},
		{"more after the value", `{"steps": [{"send": "x"}]} {}`,
			[]string{`seq: invalid JSON: more after the value`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := steps.ParseValue("seq", json.RawMessage(tc.json), steps.LoadOptions{})
			var el steps.ErrorList
			if !errors.As(err, &el) {
				t.Fatalf("ParseValue = %v, want an ErrorList", err)
			}
			if len(el) != len(tc.want) {
				t.Fatalf("got %d problems, want %d:\n%v", len(el), len(tc.want), err)
			}
			for i, e := range el {
				if !strings.HasPrefix(e.Error(), tc.want[i]) {
					t.Errorf("problem %d:\n got %s\nwant %s...", i, e.Error(), tc.want[i])
				}
				if e.Pos.Line != 0 || e.Pos.Col != 0 {
					t.Errorf("problem %d has a line and column (%d:%d) besides its pointer", i, e.Pos.Line, e.Pos.Col)
				}
			}
		})
	}
}

// The same problems, in the same words and order, come from both ways of
// reading.
func TestParseValueErrorsAsTextDoes(t *testing.T) {
	msgs := func(err error) []string {
		var el steps.ErrorList
		if !errors.As(err, &el) {
			t.Fatalf("%v is not an ErrorList", err)
		}
		var out []string
		for _, e := range el {
			out = append(out, e.Msg)
		}
		return out
	}
	for _, src := range []string{
		`{"steps": [{"send": "x", "expct": "y", "timeout": 5}, {"delay": "forever"}, {"mem_read": true, "address": "0x1", "width": 12}]}`,
		`{"devices": {"dut": {"baud": "fast", "parity": "evn"}}, "steps": [{"send": "x", "to": "dot"}]}`,
		`{"vars": {"n": 1}, "steps": [{"assert": "m > 1"}, {"set": {"n": {"expr": "n +"}}}]}`,
	} {
		for _, r := range readBoth(t, src) {
			if want, got := msgs(r.textErr), msgs(r.valueErr); !reflect.DeepEqual(got, want) {
				t.Errorf("%s: %s:\nParse:      %q\nParseValue: %q", r.how, src, want, got)
			}
		}
	}
}

func TestParseValueLimits(t *testing.T) {
	deep := strings.Repeat("[", steps.MaxValueDepth+1) + strings.Repeat("]", steps.MaxValueDepth+1)
	var nested any = []any{}
	for range steps.MaxValueDepth + 1 {
		nested = []any{nested}
	}
	many := make([]any, steps.MaxValueNodes)
	for i := range many {
		many[i] = 0
	}
	big := strings.Repeat("x", steps.MaxValueBytes/2+1)
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"deep JSON", json.RawMessage(`{"steps": [{"send": "x"}], "vars": {"d": ` + deep + `}}`), "seq: /vars/d/0/0/"},
		{"deep values", map[string]any{"steps": nested}, "(the depth limit)"},
		{"many values", map[string]any{"steps": []any{map[string]any{"send": "x"}}, "vars": map[string]any{"v": many}}, "(the value count limit)"},
		{"much text", map[string]any{"steps": []any{map[string]any{"send": big}, map[string]any{"send": big}}}, "seq: /steps/1/send: the sequence holds more than 4 MiB of text (the size limit)"},
		{"large JSON text", json.RawMessage(`{"steps": [{"send": "` + big + big + `"}]}`), "seq: the JSON text is larger than 4 MiB (the size limit)"},
		{"not JSON", map[string]any{"steps": []any{map[string]any{"send": struct{}{}}}}, "seq: /steps/0/send: a value of type struct {} is not JSON"},
		{"not a number", map[string]any{"steps": []any{map[string]any{"delay_ms": json.Number("1_000")}}}, `seq: /steps/0/delay_ms: "1_000" is not a JSON number`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := steps.ParseValue("seq", tc.v, steps.LoadOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ParseValue = %.300v, want %q", err, tc.want)
			}
		})
	}
}

// Positions of a sequence read from a value are JSON pointers, and paths
// in it stay as written.
func TestParseValuePlaces(t *testing.T) {
	seq, err := steps.ParseValue("serial_sequence", json.RawMessage(`{"devices": {"dut": "/dev/ttyUSB0"},
		"steps": [{"send": "x"}, {"mem_read": true, "symbol": "counter", "elf": "fw/fw.elf"}]}`), steps.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if seq.File != "serial_sequence" || seq.Name != "serial_sequence" {
		t.Errorf("File %q, Name %q, want serial_sequence", seq.File, seq.Name)
	}
	if got := seq.Steps[1].Pos.String(); got != "serial_sequence: /steps/1" {
		t.Errorf("step 1 at %q", got)
	}
	if got := seq.Steps[1].Mem.ELF; got != "fw/fw.elf" {
		t.Errorf("elf %q, want fw/fw.elf as written", got)
	}
	if d := seq.Device("dut"); d == nil || d.PortFrom != "serial_sequence: /devices/dut" {
		t.Errorf("device dut: %+v", d)
	}
}

// withoutPlaces is a copy of seq's decoded content with what says where
// it came from (positions, file name, compiled programs) left out.
func withoutPlaces(seq *steps.Sequence) *steps.Sequence {
	seq.File = ""
	seen := map[uintptr]bool{}
	var clear func(v reflect.Value)
	clear = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if v.IsNil() || seen[v.Pointer()] {
				return
			}
			seen[v.Pointer()] = true
			clear(v.Elem())
		case reflect.Slice:
			for i := range v.Len() {
				clear(v.Index(i))
			}
		case reflect.Map:
			for it := v.MapRange(); it.Next(); {
				clear(it.Value())
			}
		case reflect.Struct:
			if v.Type() == reflect.TypeOf(steps.Pos{}) {
				v.SetZero()
				return
			}
			if v.Type().PkgPath() != reflect.TypeOf(steps.Pos{}).PkgPath() {
				return
			}
			for i := range v.NumField() {
				f := v.Type().Field(i)
				switch {
				case !f.IsExported():
				case f.Name == "Program" || f.Name == "PortFrom":
					v.Field(i).SetZero()
				default:
					clear(v.Field(i))
				}
			}
		}
	}
	clear(reflect.ValueOf(seq))
	return seq
}

// dump is seq's content without its places, as JSON: what it holds,
// fields left unexported being made from those exported.
func dump(seq *steps.Sequence) string {
	seq = withoutPlaces(seq)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", " ")
	_ = enc.Encode(seq)
	return b.String()
}
