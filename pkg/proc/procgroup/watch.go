package procgroup

import "os/exec"

// Prepare sets cmd up to run in a process group of its own, as SysProcAttr
// does, and on Unix under a watcher that kills the whole group, the
// program's own children included, when hilrun dies, even of SIGKILL. The
// parent-death signal that SysProcAttr sets reaches only the group's
// leader: a shell's background job, or a build tool's compiler, would
// outlive hilrun without the watcher. Call Prepare just before cmd.Start,
// once Path, Args and ExtraFiles are set. Terminate, Kill and ExitCode work
// on the command as without it.
//
// The watcher is a forked /bin/sh in the group, blocked reading a pipe
// whose write end only hilrun holds; the program then replaces the shell
// (exec), so it is the group's leader and hilrun's child, and its argv[0]
// is its path. Once the program has exited, Kill ends the watcher with
// the rest of the group.
func Prepare(cmd *exec.Cmd) {
	cmd.SysProcAttr = SysProcAttr()
	if len(cmd.ExtraFiles) > 0 || cmd.Err != nil {
		return
	}
	watch(cmd)
}
