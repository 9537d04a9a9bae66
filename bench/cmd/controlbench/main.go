// Command controlbench measures what hilrun's bench-control steps cost on
// top of the tools they drive, side by side in one run with the modes
// alternating:
//
//   - h: a camera capture step (one frame from the virtual board's camera,
//     through ffmpeg, saved as PNG) against running the same ffmpeg
//     command directly;
//   - i: an exec step running `true` against Python's subprocess.run of
//     the same program, the way a pytest-based bench runs host tools.
//
// Run it with:
//
//	go run ./bench/cmd/controlbench -n 20 -rounds 10
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/hilrun/hilrun/bench"
	"github.com/hilrun/hilrun/internal/engine"
	"github.com/hilrun/hilrun/pkg/camera"
	"github.com/hilrun/hilrun/pkg/plan"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/sim"
	"github.com/hilrun/hilrun/pkg/steps"
)

func main() {
	n := flag.Int("n", 20, "operations per mode per round")
	rounds := flag.Int("rounds", 5, "rounds per mode, alternating")
	only := flag.String("only", "h,i", "scenarios to run: h (camera), i (exec)")
	flag.Parse()
	if err := run(*n, *rounds, *only); err != nil {
		fmt.Fprintln(os.Stderr, "controlbench:", err)
		os.Exit(1)
	}
}

func run(n, rounds int, only string) error {
	dir, err := os.MkdirTemp("", "hilrun-controlbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if strings.Contains(only, "h") {
		if err := cameraBench(dir, n, rounds); err != nil {
			return fmt.Errorf("h: %w", err)
		}
	}
	if strings.Contains(only, "i") {
		if err := execBench(dir, n, rounds); err != nil {
			return fmt.Errorf("i: %w", err)
		}
	}
	return nil
}

// stepDurations runs seq and returns the duration of each step of kind.
func stepDurations(seq *steps.Sequence, artifacts string, kind steps.Kind) ([]time.Duration, error) {
	pl, err := plan.Bind(seq, plan.Sources{})
	if err != nil {
		return nil, err
	}
	res := pl.Run(context.Background(), engine.NewBench(engine.BenchConfig{Gates: bench.Gates}), plan.Output{ArtifactDir: artifacts, KeepSteps: true})
	if res.Status != runner.Passed {
		return nil, fmt.Errorf("the sequence did not pass: %s %s", res.Status, res.Error)
	}
	var out []time.Duration
	for _, s := range res.Steps {
		if s.Kind == string(kind) {
			out = append(out, s.Duration)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the run kept no %s step to time", kind)
	}
	return out, nil
}

func repeatSeq(n int, step string) (*steps.Sequence, error) {
	src := fmt.Sprintf("steps:\n  - repeat: %d\n    steps:\n      - %s\n", n, step)
	return steps.Parse("controlbench.yaml", []byte(src), steps.LoadOptions{})
}

func report(name, peer string, hil, other []time.Duration) {
	h, o := bench.Summarize(hil), bench.Summarize(other)
	ms := func(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/1e6) }
	fmt.Printf("| %s | %d | %s | %s | %s |\n", name, h.N, ms(h.Median), ms(h.P99), ms(h.Max))
	fmt.Printf("| %s | %d | %s | %s | %s |\n", peer, o.N, ms(o.Median), ms(o.P99), ms(o.Max))
	fmt.Printf("\nratio of medians, hilrun / %s: %.2f\n\n", strings.Fields(peer)[0], float64(h.Median)/float64(o.Median))
}

func cameraBench(dir string, n, rounds int) error {
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		return errors.New("ffmpeg is not installed (apt-get install ffmpeg)")
	}
	board := sim.New(sim.Options{})
	if err := board.Start(); err != nil {
		return err
	}
	defer board.Close()
	cam, err := board.StartCamera("")
	if err != nil {
		return err
	}
	url := cam.URL() + sim.CameraStreamPath
	seq, err := repeatSeq(n, "{capture: true, label: frame}")
	if err != nil {
		return err
	}
	seq = steps.BindCameras(seq, url, "mpjpeg")
	argv := camera.Argv(camera.Source{Input: url, Format: "mpjpeg"}, 1, filepath.Join(dir, "direct.png"))
	var hil, direct []time.Duration
	for r := 0; r < rounds; r++ {
		d, err := stepDurations(seq, filepath.Join(dir, fmt.Sprint("h", r)), steps.KindCamera)
		if err != nil {
			return err
		}
		hil = append(hil, d...)
		for i := 0; i < n; i++ {
			start := time.Now()
			if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
				return fmt.Errorf("%s: %v\n%s", strings.Join(argv, " "), err, out)
			}
			direct = append(direct, time.Since(start))
		}
		fmt.Fprintf(os.Stderr, "h: round %d/%d\n", r+1, rounds)
	}
	fmt.Printf("(h) one frame from the virtual board's camera, saved as PNG\n\n| mode | frames | median | p99 | max |\n|---|--:|--:|--:|--:|\n")
	report("hilrun capture step", "ffmpeg run directly ("+strings.Join(argv[1:len(argv)-1], " ")+")", hil, direct)
	return nil
}

const pySubprocess = `
import json, subprocess, sys, time
n = int(sys.argv[1])
out = []
for _ in range(n):
    t = time.perf_counter_ns()
    subprocess.run(["true"], check=True)
    out.append(time.perf_counter_ns() - t)
print(json.dumps(out))
`

func execBench(dir string, n, rounds int) error {
	py, err := exec.LookPath("python3")
	if err != nil {
		return errors.New("python3 is not installed")
	}
	seq, err := repeatSeq(n, "exec: [\"true\"]")
	if err != nil {
		return err
	}
	var hil, pyd []time.Duration
	for r := 0; r < rounds; r++ {
		d, err := stepDurations(seq, filepath.Join(dir, fmt.Sprint("i", r)), steps.KindExec)
		if err != nil {
			return err
		}
		hil = append(hil, d...)
		out, err := exec.Command(py, "-c", pySubprocess, fmt.Sprint(n)).Output()
		if err != nil {
			return fmt.Errorf("python3: %w", err)
		}
		var ns []int64
		if err := json.Unmarshal(out, &ns); err != nil {
			return fmt.Errorf("python3 output %q: %w", out, err)
		}
		for _, v := range ns {
			pyd = append(pyd, time.Duration(v))
		}
		fmt.Fprintf(os.Stderr, "i: round %d/%d\n", r+1, rounds)
	}
	fmt.Printf("(i) a host command (`true`), output logged\n\n| mode | runs | median | p99 | max |\n|---|--:|--:|--:|--:|\n")
	report("hilrun exec step", "python3 subprocess.run", hil, pyd)
	return nil
}
