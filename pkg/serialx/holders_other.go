//go:build !linux

package serialx

// holders is not implemented outside Linux.
func holders(path string) string { return "" }
