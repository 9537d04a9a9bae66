package runner

import (
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/steps"
)

func TestBaudHint(t *testing.T) {
	dev := &steps.Device{Name: "dut", Baud: 115200}
	tests := []struct {
		name string
		tail []byte
		dev  *steps.Device
		want string
	}{
		{"wrong baud", []byte("\xf8\x00\xe0\x80\xfe\x1c\x80\xf0\x00\xff\x86\x98\x00\xe6\xfc\x18\x80\x00"), dev,
			" (18 of the last 18 bytes received are not text, as a console at the wrong baud rate reads: is baud 115200 the device's?)"},
		{"a network console names no baud", []byte("\xf8\x00\xe0\x80\xfe\x1c\x80\xf0\x00\xff\x86\x98\x00\xe6\xfc\x18"), &steps.Device{Name: "dut"},
			" (16 of the last 16 bytes received are not text, as a console at the wrong baud rate reads)"},
		{"text", []byte("U-Boot 2024.01 (Jan 01 2024)\r\n=> "), dev, ""},
		{"text in UTF-8", []byte("température: 21 °C, humidité: 40 %\r\n"), dev, ""},
		{"a few stray bytes", []byte("boot: ok\r\n\xff\x00sim> version\r\nfw 2.4.1\r\n"), dev, ""},
		{"too little to tell", []byte("\xff\x00\xfe"), dev, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := baudHint(tt.tail, tt.dev); got != tt.want {
				t.Errorf("baudHint(%q) = %q, want %q", tt.tail, got, tt.want)
			}
		})
	}
	if !strings.Contains(baudHint([]byte(strings.Repeat("\x80", 20)), nil), "wrong baud rate") {
		t.Errorf("no hint without a device")
	}
}
