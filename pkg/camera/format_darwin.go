package camera

// defaultDeviceFormat is ffmpeg's input format for a camera given as a
// device index without a Format.
const defaultDeviceFormat = "avfoundation"
