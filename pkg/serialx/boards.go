package serialx

import "strings"

// usbBoards names well-known USB serial adapters and debug probes by
// VID:PID; a "*" PID matches every product of the vendor.
var usbBoards = map[string]string{
	"0483:374b": "ST-Link/V2-1 VCP (STM32 Nucleo/Discovery)",
	"0483:374e": "ST-Link/V3 VCP",
	"0483:374f": "ST-Link/V3 VCP",
	"0483:3752": "ST-Link/V2-1 VCP",
	"0483:3753": "ST-Link/V3 VCP",
	"0483:3754": "ST-Link/V3 VCP",
	"0483:5740": "STM32 USB CDC (virtual COM port)",
	"10c4:ea60": "Silicon Labs CP210x UART bridge",
	"10c4:ea70": "Silicon Labs CP2105 dual UART bridge",
	"1a86:7523": "WCH CH340 UART bridge",
	"1a86:55d3": "WCH CH343 UART bridge",
	"1a86:55d4": "WCH CH9102 UART bridge",
	"0403:6001": "FTDI FT232R UART",
	"0403:6010": "FTDI FT2232 dual UART/JTAG",
	"0403:6011": "FTDI FT4232 quad UART/JTAG",
	"0403:6014": "FTDI FT232H UART/JTAG",
	"0403:6015": "FTDI FT-X UART",
	"303a:1001": "Espressif USB-Serial/JTAG (ESP32-C3/S3/C6)",
	"303a:0002": "Espressif ESP32-S2 USB CDC",
	"2e8a:000c": "Raspberry Pi Debug Probe (CMSIS-DAP)",
	"2e8a:000a": "Raspberry Pi Pico USB CDC",
	"2e8a:0005": "Raspberry Pi Pico MicroPython",
	"0d28:0204": "Arm DAPLink / mbed CMSIS-DAP",
	"1915:c00a": "Nordic nRF Connect / J-Link OB",
	"2341:0043": "Arduino Uno",
	"2341:0042": "Arduino Mega 2560",
	"239a:*":    "Adafruit board",
	"1366:*":    "SEGGER J-Link VCP",
	"1fc9:0143": "NXP MCU-Link CMSIS-DAP",
	"067b:2303": "Prolific PL2303 UART bridge",
}

// BoardName names the USB serial adapter or board with vid and pid
// (hexadecimal, either case), or "" when it is not a well-known one.
func BoardName(vid, pid string) string {
	vid, pid = strings.ToLower(vid), strings.ToLower(pid)
	if b, ok := usbBoards[vid+":"+pid]; ok {
		return b
	}
	return usbBoards[vid+":*"]
}
