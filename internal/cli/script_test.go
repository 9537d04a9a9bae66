package cli_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/hilrun/hilrun/internal/cli"
	"github.com/hilrun/hilrun/pkg/sim"
	"github.com/hilrun/hilrun/pkg/testenv"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"hilrun": func() { os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// TestScript runs the binary end to end from the .txtar files in
// testdata/script. Besides the usual commands, scripts have:
//
//	sim NAME [--latency D] [--unplug-after D]
//	    start a virtual board on a real pty and set $NAME to its path
//
// and the condition [ci], true under CI=true.
func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"sim": cmdSim,
		},
		RequireExplicitExec: true,
		// [ci] holds under CI=true, where a missing tool must fail the
		// script rather than skip it.
		Condition: func(cond string) (bool, error) {
			if cond == "ci" {
				return testenv.CI(), nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
	})
}

func cmdSim(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: sim NAME [--link PATH]")
	}
	opts := sim.Options{}
	for i := 1; i < len(args); i++ {
		switch args[i] {
		case "--link":
			i++
			opts.Link = ts.MkAbs(args[i])
		default:
			ts.Fatalf("sim: unknown option %s", args[i])
		}
	}
	b := sim.New(opts)
	if err := b.Start(); err != nil {
		ts.Fatalf("start the virtual board: %v", err)
	}
	ts.Defer(func() { b.Close() })
	ts.Setenv(args[0], b.SerialPath())
}
