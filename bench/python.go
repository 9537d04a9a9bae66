package bench

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// DebianPython is where Debian's python3-pexpect package puts the module
// within reach: the system interpreter, which a python3 earlier on PATH
// (pyenv, a virtual environment) may shadow.
const DebianPython = "/usr/bin/python3"

// FindPython returns the first interpreter, of python3 on PATH and then
// DebianPython, that can import pexpect; the error lists what each
// candidate said.
func FindPython(ctx context.Context) (string, error) {
	var candidates, tried []string
	if p, err := exec.LookPath("python3"); err == nil {
		candidates = append(candidates, p)
	} else {
		tried = append(tried, "python3: not on PATH")
	}
	candidates = append(candidates, DebianPython)
	for _, p := range candidates {
		out, err := exec.CommandContext(ctx, p, "-c", "import pexpect").CombinedOutput()
		if err == nil {
			return p, nil
		}
		why := lastLines(string(out), 1)
		if why == "" {
			why = err.Error()
		}
		tried = append(tried, p+": "+why)
	}
	return "", fmt.Errorf("no python3 that can import pexpect (apt-get install python3-pexpect): %s", strings.Join(tried, "; "))
}
