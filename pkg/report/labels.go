package report

import (
	"fmt"
	"strings"
)

// withAddress adds to a memory step's label the address it resolved to,
// as in "gpio_base + 0x10 at 0x48000010", unless the label is that
// address already.
func withAddress(label string, address any) string {
	if address == nil {
		return label
	}
	at := hexValue(address, 8)
	if !strings.HasPrefix(at, "0x") || strings.EqualFold(label, at) {
		return label
	}
	return label + " at " + at
}

// sentText is what a send step sent (its data["sent"]) for one line of a
// report, and whether it has one.
func sentText(data map[string]any) (string, bool) {
	v, ok := data["sent"]
	if !ok || v == nil {
		return "", false
	}
	if b, ok := v.([]byte); ok {
		return cleanLine(string(b)), true
	}
	return cleanLine(fmt.Sprint(v)), true
}
