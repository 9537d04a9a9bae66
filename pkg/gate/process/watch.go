package process

import "os/exec"

// prepare sets cmd up to run in a process group of its own, as sysProcAttr
// does, and on Unix under a watcher that kills the whole group, the
// program's own children included, when hilrun dies, even of SIGKILL. The
// parent-death signal that sysProcAttr sets reaches only the group's
// leader: a shell's background job, or a build tool's compiler, would
// outlive hilrun without the watcher. Call prepare just before cmd.Start,
// once Path, Args and ExtraFiles are set. Terminate, Kill and ExitCode work
// on the command as without it.
//
// The watcher is a forked /bin/sh in the group, blocked reading a pipe
// whose write end only hilrun holds; the program then replaces the shell
// (exec), so it is the group's leader and hilrun's child, and its argv[0]
// is its path. Once the program has exited, Kill ends the watcher with
// the rest of the group.
func prepare(cmd *exec.Cmd) {
	cmd.SysProcAttr = sysProcAttr()
	if len(cmd.ExtraFiles) > 0 || cmd.Err != nil {
		return
	}
	watch(cmd)
}
