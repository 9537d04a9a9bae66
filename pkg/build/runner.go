package build

import (
	"context"
	"io"
)

// Runner runs one process to completion; process.Runner, which starts it
// through hilrun's process gate, is the one hilrun uses. argv[0] is
// looked up on PATH, or in dir when it is a relative path such as
// ./build.sh; dir is its working directory ("" for the current one); env
// holds KEY=VALUE entries added to the runner's own environment. Standard output and
// standard error both go to out.
//
// exitCode is the process's exit status, 128+N when signal N ended it, and
// -1 when it did not run or did not finish. err is non-nil only when the
// process could not be started (wrapping process.ErrNotFound when argv[0]
// is not installed) or was stopped because ctx ended (wrapping ctx.Err()); a
// process that ran and failed returns its exit code and a nil error.
type Runner interface {
	Run(ctx context.Context, argv []string, dir string, env []string, out io.Writer) (exitCode int, err error)
}
