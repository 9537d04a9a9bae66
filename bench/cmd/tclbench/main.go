// Command tclbench measures one 32-bit read of the virtual board's memory
// through an OpenOCD that hilrun launched: by hilrun's session over Tcl
// RPC, by hilrun's session over telnet, and by a bare Tcl RPC round trip
// it makes itself, in interleaved rounds; see bench.TclRPCBench.
//
//	go run ./bench/cmd/tclbench [-rounds 20] [-n 200] [-warmup 20] [-json FILE]
//
// It exits 0 when the reads over Tcl RPC take at most 1.5 times the raw
// round trip (median of the per-round ratios), 1 when they take longer, 2
// for bad flags and 3 when the benchmark could not run.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/hilrun/hilrun/bench"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// goal is the largest ratio of a read over Tcl RPC to a raw round trip
// that passes.
const goal = 1.5

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tclbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o bench.TclOptions
	fs.IntVar(&o.Rounds, "rounds", 20, "rounds; each runs every side once, in rotating order")
	fs.IntVar(&o.N, "n", 200, "measured reads per side and round")
	fs.IntVar(&o.Warmup, "warmup", 20, "unmeasured reads per side and round")
	fs.StringVar(&o.OpenOCD, "openocd", "openocd", "OpenOCD executable")
	jsonOut := fs.String("json", "", "also write the figures as JSON to `FILE`")
	quiet := fs.Bool("q", false, "no progress lines on standard error")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if !*quiet {
		o.Progress = func(s string) { fmt.Fprintln(stderr, s) }
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := bench.TclRPCBench(ctx, o)
	if err != nil {
		fmt.Fprintln(stderr, "tclbench:", err)
		if ctx.Err() != nil {
			return 130
		}
		return 3
	}
	fmt.Fprintf(stdout, "One 32-bit read of the virtual board through %s (%d rounds x %d reads per side, %d warm-up):\n\n", rep.OpenOCD, rep.Rounds, rep.N, rep.Warmup)
	fmt.Fprintln(stdout, "| side | median | p99 |")
	fmt.Fprintln(stdout, "|---|---:|---:|")
	for _, s := range rep.Sides {
		fmt.Fprintf(stdout, "| %s | %s | %s |\n", s.Side, us(s.Summary.Median), us(s.Summary.P99))
	}
	fmt.Fprintf(stdout, "\nover tcl-rpc / raw tcl-rpc: %.2fx (median of per-round ratios; goal <= %.1fx)\n", rep.Ratio, goal)
	fmt.Fprintf(stdout, "over telnet / raw tcl-rpc: %.2fx; tcl-rpc is %.2fx faster than telnet\n", rep.TelnetRatio, rep.Speedup)
	if *jsonOut != "" {
		if err := bench.WriteJSON(*jsonOut, rep); err != nil {
			fmt.Fprintln(stderr, "tclbench: write the JSON report:", err)
			return 3
		}
	}
	if rep.Ratio > goal {
		return 1
	}
	return 0
}

func us(d time.Duration) string { return fmt.Sprintf("%.1f µs", float64(d)/float64(time.Microsecond)) }
