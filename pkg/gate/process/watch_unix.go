//go:build unix

package process

import (
	"os"
	"os/exec"
	"sync"
)

// lifeline is a pipe whose write end only hilrun holds: every watcher gets
// the read end as descriptor 3, and reads end-of-file when hilrun is gone,
// however it died. Both ends close on exec in hilrun's other children.
type lifelinePipe struct {
	r, w *os.File // w is held, never written, for the life of the process
	sh   string
}

// lifeline makes the pipe once; it is nil when there is no shell or pipe,
// and programs then start unwatched.
var lifeline = sync.OnceValue(func() *lifelinePipe {
	sh, err := exec.LookPath("/bin/sh")
	if err != nil {
		return nil
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil
	}
	return &lifelinePipe{r: r, w: w, sh: sh}
})

// watcherScript starts the watcher in the background, with the signals a
// group is stopped with ignored so that it outlives a Terminate grace
// period, then runs the program in the shell's place. kill -9 0 kills the
// shell's process group: the program's.
const watcherScript = `(trap '' INT TERM HUP QUIT; read x <&3; kill -9 0) </dev/null >/dev/null 2>&1 &
exec 3<&-
exec "$@"`

func watch(cmd *exec.Cmd) {
	l := lifeline()
	if l == nil {
		return
	}
	cmd.Args = append([]string{"sh", "-c", watcherScript, "sh", cmd.Path}, cmd.Args[1:]...)
	cmd.Path = l.sh
	cmd.ExtraFiles = []*os.File{l.r}
}
