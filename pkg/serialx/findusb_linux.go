package serialx

import "os"

// FindUSB returns the path of the one USB serial port with vendor ID vid
// and product ID pid (hex, any case, "0x" allowed) and, when serial is not
// empty, that serial number (any case). When no port or several match, the
// error lists the USB serial ports found. On Linux it reads /sys with
// hilrun's own walker, as bench discover does (see FindUSBIn). It is meant
// for Config.Resolve:
//
//	cfg.Resolve = func(ctx context.Context) (string, error) { return serialx.FindUSB("2e8a", "000a", "") }
func FindUSB(vid, pid, serial string) (string, error) {
	return FindUSBIn(os.DirFS("/sys"), vid, pid, serial)
}
