// Command poolbench measures how a pool of virtual boards scales: the wall
// time of hilrun run --pool over a set of sequences with -j 1 against -j N,
// in one process as hilrun runs, the two alternating round by round. The
// pool has N benches, each a virtual board (sim: true); its start is part
// of each run's time, as it is for a user.
//
// Two workloads, because they scale differently:
//
//   - wait: sequences that mostly wait on the board (a repeat every 50 ms,
//     delays), as most hardware tests do: they scale with the benches;
//   - stream: sequences that move 100000 bytes at full speed twice, bound
//     by the CPU: on a machine with few cores they scale with the cores.
//
// Run it with:
//
//	go run ./bench/cmd/poolbench -benches 8 -seqs 16 -rounds 5
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/hilrun/hilrun/bench"
	"github.com/hilrun/hilrun/internal/cli"
)

func main() {
	benches := flag.Int("benches", 8, "virtual boards in the pool, and the -j of the parallel runs")
	seqs := flag.Int("seqs", 16, "sequences per run")
	rounds := flag.Int("rounds", 5, "rounds per mode, alternating")
	only := flag.String("only", "wait,stream", "workloads to run: wait, stream")
	asJSON := flag.Bool("json", false, "print the results as JSON")
	flag.Parse()
	if err := run(*benches, *seqs, *rounds, *only, *asJSON); err != nil {
		fmt.Fprintln(os.Stderr, "poolbench:", err)
		os.Exit(1)
	}
}

// waitSeq mostly waits on the board: about 0.5 s, little CPU.
const waitSeq = `name: %s
steps:
  - {send: "", expect: "sim> "}
  - repeat: {count: 8, every: 50ms}
    steps:
      - {send: echo tick, expect: tick}
  - delay: 100ms
  - {send: led on, expect: LED on}
`

// streamSeq moves 100000 bytes twice at full speed.
const streamSeq = `name: %s
timeout: 60s
steps:
  - {send: "", expect: "sim> "}
  - send: stream 100000
    expect: "00001562 CDEFGHIJKLMNOPQRSTUVWXY\r\nsim> "
    timeout: 30s
  - send: stream 100000
    expect: "00001562 CDEFGHIJKLMNOPQRSTUVWXY\r\nsim> "
    timeout: 30s
`

type result struct {
	Workload string        `json:"workload"`
	Benches  int           `json:"benches"`
	Seqs     int           `json:"sequences"`
	Serial   bench.Summary `json:"j1"`
	Parallel bench.Summary `json:"jN"`
	// Speedup is the median -j 1 time over the median -j N time.
	Speedup float64 `json:"speedup"`
	CPUs    int     `json:"cpus"`
}

func run(benches, nseq, rounds int, only string, asJSON bool) error {
	dir, err := os.MkdirTemp("", "hilrun-poolbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	os.Setenv("XDG_RUNTIME_DIR", dir)
	var pool strings.Builder
	pool.WriteString("benches:\n")
	for i := range benches {
		fmt.Fprintf(&pool, "  - {name: b%d, sim: true}\n", i+1)
	}
	poolFile := filepath.Join(dir, "lab.pool.yaml")
	if err := os.WriteFile(poolFile, []byte(pool.String()), 0o644); err != nil {
		return err
	}
	var out []result
	for _, w := range []struct{ name, src string }{{"wait", waitSeq}, {"stream", streamSeq}} {
		if !strings.Contains(only, w.name) {
			continue
		}
		seqDir := filepath.Join(dir, w.name)
		if err := os.Mkdir(seqDir, 0o755); err != nil {
			return err
		}
		for i := range nseq {
			name := fmt.Sprintf("%s-%02d", w.name, i+1)
			if err := os.WriteFile(filepath.Join(seqDir, name+".yaml"), []byte(fmt.Sprintf(w.src, name)), 0o644); err != nil {
				return err
			}
		}
		var serial, parallel []time.Duration
		for r := range rounds {
			modes := []int{1, benches}
			if r%2 == 1 {
				modes = []int{benches, 1}
			}
			for _, j := range modes {
				start := time.Now()
				code := cli.Main([]string{"run", "--pool", poolFile, "-j", fmt.Sprint(j), seqDir}, strings.NewReader(""), io.Discard, os.Stderr)
				d := time.Since(start)
				if code != 0 {
					return fmt.Errorf("%s -j %d: exit %d", w.name, j, code)
				}
				if j == 1 {
					serial = append(serial, d)
				} else {
					parallel = append(parallel, d)
				}
			}
		}
		res := result{Workload: w.name, Benches: benches, Seqs: nseq, Serial: bench.Summarize(serial), Parallel: bench.Summarize(parallel), CPUs: runtime.NumCPU()}
		res.Speedup = float64(res.Serial.Median) / float64(res.Parallel.Median)
		out = append(out, res)
	}
	if asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	fmt.Printf("pool of %d virtual boards, %d CPUs; wall time of one run (median, p99 over the rounds)\n", benches, runtime.NumCPU())
	fmt.Printf("%-8s %5s %9s %9s  %9s %9s  %8s\n", "workload", "seqs", "-j 1 med", "p99", fmt.Sprintf("-j %d med", benches), "p99", "speedup")
	for _, r := range out {
		fmt.Printf("%-8s %5d %9s %9s  %9s %9s  %7.2fx\n", r.Workload, r.Seqs,
			r.Serial.Median.Round(time.Millisecond), r.Serial.P99.Round(time.Millisecond),
			r.Parallel.Median.Round(time.Millisecond), r.Parallel.P99.Round(time.Millisecond), r.Speedup)
	}
	return nil
}
