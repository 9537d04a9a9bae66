//go:build !unix

package process

import "os/exec"

// Without process groups there is no group to watch.
func watch(cmd *exec.Cmd) {}
