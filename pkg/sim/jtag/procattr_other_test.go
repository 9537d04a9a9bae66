//go:build !linux

package jtag

import "os/exec"

// setProcAttr does nothing here: only Linux can tie a child's life to its
// parent's. The tests' cleanups still kill OpenOCD.
func setProcAttr(cmd *exec.Cmd) {}
