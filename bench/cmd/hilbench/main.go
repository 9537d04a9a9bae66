// Command hilbench measures hilrun against Python's pexpect on the virtual
// board and prints a Markdown report; see package bench.
//
//	go run ./bench/cmd/hilbench [-only a,b,c,d] [-n 2000] [-out FILE]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/hilrun/hilrun/bench"
)

func main() {
	if os.Getenv(bench.ChildEnv) != "" {
		os.Exit(bench.ChildMain(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("hilbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		opts    bench.Options
		only    = fs.String("only", "", "run only these scenarios, comma-separated: a (round trip), b (search), c (delay), d (lossless log)")
		out     = fs.String("out", "", "write the Markdown report to `FILE` instead of standard output")
		jsonOut = fs.String("json", "", "also write the report's figures as JSON to `FILE`")
		delays  = fs.String("delays", "1ms,10ms,100ms", "delay lengths of scenario c, comma-separated")
		noPy    = fs.Bool("no-pexpect", false, "measure hilrun only")
	)
	fs.IntVar(&opts.N, "n", 2000, "measured round trips per side (a)")
	fs.IntVar(&opts.Rounds, "rounds", 4, "alternating blocks per side (a, c)")
	fs.IntVar(&opts.Warmup, "warmup", 50, "unmeasured round trips per block (a)")
	fs.Int64Var(&opts.SearchSize, "size", 25_000_000, "stream length in bytes (b)")
	fs.Int64Var(&opts.SmallSize, "small", 0, "shorter stream for regexp searches (b); 0 means size/10")
	fs.IntVar(&opts.SearchReps, "reps", 3, "runs of each search (b)")
	fs.DurationVar(&opts.Limit, "limit", 180*time.Second, "time limit of each search (b)")
	fs.IntVar(&opts.DelayN, "delay-n", 300, "measured delays per side and length (c)")
	fs.DurationVar(&opts.StreamFor, "for", 10*time.Second, "how long to stream (d)")
	fs.Int64Var(&opts.StreamChunk, "chunk", 20_000_000, "bytes per stream command (d)")
	fs.BoolVar(&opts.WaitVariants, "wait-variants", false, "add diagnostic sides to c: a serialx console waiting with the runner's method, with sched_yield, with time.Sleep")
	fs.StringVar(&opts.Python, "python", "python3", "Python interpreter with pexpect")
	fs.StringVar(&opts.WorkDir, "workdir", "", "keep the pexpect scripts here (default: a temporary directory)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *only != "" {
		for _, s := range strings.Split(*only, ",") {
			switch s = strings.TrimSpace(s); s {
			case bench.RoundTrip, bench.Search, bench.Delay, bench.Lossless:
				opts.Only = append(opts.Only, s)
			default:
				fmt.Fprintf(stderr, "hilbench: -only: unknown scenario %q (want a, b, c or d)\n", s)
				return 2
			}
		}
	}
	for _, s := range strings.Split(*delays, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil || d <= 0 {
			fmt.Fprintf(stderr, "hilbench: -delays: %q is not a positive duration\n", s)
			return 2
		}
		opts.Delays = append(opts.Delays, d)
	}
	if *noPy {
		opts.Python = ""
	}
	opts.Command = "go run ./bench/cmd/hilbench " + strings.Join(args, " ")
	opts.Progress = stderr

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := bench.Run(ctx, opts)
	if rep != nil {
		w := stdout
		if *out != "" {
			f, ferr := os.Create(*out)
			if ferr != nil {
				fmt.Fprintf(stderr, "hilbench: %v\n", ferr)
				return 1
			}
			defer f.Close()
			w = f
		}
		if werr := rep.WriteMarkdown(w); werr != nil {
			fmt.Fprintf(stderr, "hilbench: write the report: %v\n", werr)
			return 1
		}
		if *jsonOut != "" {
			data, _ := json.MarshalIndent(rep, "", "  ")
			if werr := os.WriteFile(*jsonOut, append(data, '\n'), 0o644); werr != nil {
				fmt.Fprintf(stderr, "hilbench: %v\n", werr)
				return 1
			}
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "hilbench: %v\n", err)
		return 1
	}
	return 0
}
