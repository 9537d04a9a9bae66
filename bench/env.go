// The machine and the tools a report was made with.

package bench

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"strings"
)

// Env describes the machine and the tools.
type Env struct {
	NumCPU     int    `json:"num_cpu"`
	CPU        string `json:"cpu"`
	Kernel     string `json:"kernel"`
	Go         string `json:"go"`
	Python     string `json:"python,omitempty"`
	PythonPath string `json:"python_path,omitempty"`
	Pexpect    string `json:"pexpect,omitempty"`
	OpenOCD    string `json:"openocd,omitempty"`
	Commit     string `json:"commit,omitempty"`
	LoadBefore string `json:"load_before"`
	// BoardRx is the priority the board reads its console at.
	BoardRx string `json:"board_rx"`
	// Device is the board of the serial scenarios (Options.Device).
	Device    string `json:"device"`
	LoadAfter string `json:"load_after"`
}

// env records the machine and the tool versions.
func (b *bencher) env(ctx context.Context) Env {
	e := Env{NumCPU: runtime.NumCPU(), Go: runtime.Version(), LoadBefore: loadAvg(), BoardRx: "normal priority (-board-normal)"}
	if !b.opts.BoardNormal {
		e.BoardRx = "normal priority (SCHED_FIFO not permitted)"
		if fifoPermitted() {
			e.BoardRx = "SCHED_FIFO"
		}
	}
	e.Device = "hilrun's virtual board (Go, in hilbench's process)"
	if b.opts.Device == DevicePython {
		e.Device = "the Python board (bench/pyboard.py, " + b.opts.BoardPython + ", a process of its own, pinned to no CPU); it reads at SCHED_FIFO when permitted unless -board-normal"
	}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				e.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if data, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		e.Kernel = strings.TrimSpace(string(data))
	}
	if b.opts.Python != "" {
		e.PythonPath = b.opts.Python
		out, err := exec.CommandContext(ctx, b.opts.Python, "-c",
			"import sys, pexpect; print(sys.version.split()[0], pexpect.__version__)").Output()
		if f := strings.Fields(string(out)); err == nil && len(f) == 2 {
			e.Python, e.Pexpect = f[0], f[1]
		}
	}
	if _, err := exec.LookPath(b.opts.OpenOCD); err == nil {
		e.OpenOCD = openocdVersion(ctx, b.opts.OpenOCD)
	}
	e.Commit = gitCommit(ctx)
	return e
}

// gitCommit returns the short hash of the checked-out commit, with
// "+changes" when tracked files differ from it, or "" outside a work tree.
func gitCommit(ctx context.Context) string {
	out, err := exec.CommandContext(ctx, "git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return ""
	}
	c := strings.TrimSpace(string(out))
	if exec.CommandContext(ctx, "git", "diff", "--quiet", "HEAD", "--").Run() != nil {
		c += "+changes"
	}
	return c
}

func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}
