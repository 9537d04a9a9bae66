package results

import (
	"encoding/json"
	"math"
	"net"
	"testing"
)

func TestJSONValue(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"bytes", []byte("a\x00\xff\\é\n"), `"a\\x00\\xff\\\\é\\n"`},
		{"byte array", [3]byte{'o', 'k', 0x1b}, `"ok\\x1b"`},
		{"named bytes", json.RawMessage(`{"a":1}`), `{"a":1}`},
		{"text marshaler", net.IPv4(10, 0, 0, 1), `"10.0.0.1"`},
		{"nested", map[string]any{"l": []any{[]byte("x\r"), 1}}, `{"l":["x\\r",1]}`},
		{"typed map", map[string][]byte{"k": []byte("\x07")}, `{"k":"\\x07"}`},
		{"slice of byte slices", [][]byte{[]byte("a"), []byte("\x01")}, `["a","\\x01"]`},
		{"ints", []uint64{1, 2}, `[1,2]`},
		{"nan", math.NaN(), `"NaN"`},
		{"inf", []float64{math.Inf(1), 1.5}, `["+Inf",1.5]`},
		{"string", "keep \x1b as JSON escapes it", `"keep \u001b as JSON escapes it"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(JSONValue(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}
