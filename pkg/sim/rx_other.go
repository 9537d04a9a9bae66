//go:build !linux

package sim

// readRealtime returns false: Options.RealtimeRx acts on Linux only.
func (s *session) readRealtime() bool { return false }
