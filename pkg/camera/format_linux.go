package camera

// defaultDeviceFormat is ffmpeg's input format for a camera given as a
// device path or index without a Format.
const defaultDeviceFormat = "v4l2"
