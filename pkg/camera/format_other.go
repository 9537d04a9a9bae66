//go:build !linux && !darwin

package camera

// defaultDeviceFormat is empty: there is no format to guess for a camera
// here (on Windows it would be dshow, which names cameras rather than
// numbering them), so Grab asks for Source.Format.
const defaultDeviceFormat = ""
