package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hilrun/hilrun/pkg/plan"
	"github.com/hilrun/hilrun/pkg/steps"
)

// bindFlags are the NAME=VALUE flags of run and repl, by name.
type bindFlags struct {
	vars, ports, openocds, gdbs map[string]string
	secrets                     map[string]*steps.SecretSource
	// port is a bare --port PATH: the port of a sequence's only device.
	port string
}

// parseFlags reads the NAME=VALUE flags --var, --port and --probe (with
// --openocd and --gdb).
func parseFlags(varFlags []string, b *BindFlags) (bindFlags, error) {
	var f bindFlags
	var err error
	if f.vars, err = steps.ParseAssignments("var", varFlags); err != nil {
		return f, invalid(err)
	}
	openocdFlags, gdbFlags, err := b.probeFlags()
	if err != nil {
		return f, invalid(err)
	}
	portFlags := b.Ports
	if f.port, portFlags, err = barePort(portFlags); err != nil {
		return f, invalid(err)
	}
	if f.ports, err = steps.ParseAssignments("port", portFlags); err != nil {
		return f, invalid(err)
	}
	if f.openocds, err = steps.ParseAssignments("openocd", openocdFlags); err != nil {
		return f, invalid(err)
	}
	if f.gdbs, err = steps.ParseAssignments("gdb", gdbFlags); err != nil {
		return f, invalid(err)
	}
	if f.secrets, err = parseSecretFlags(b.Secrets); err != nil {
		return f, invalid(err)
	}
	return f, nil
}

// loadAll validates every file before anything runs; all errors of all
// files are reported together.
func loadAll(files []string, varNames []string) ([]*steps.Sequence, error) {
	var seqs []*steps.Sequence
	var all steps.ErrorList
	for _, f := range files {
		seq, err := steps.Load(hostGates().Files, f, steps.LoadOptions{Vars: varNames})
		var el steps.ErrorList
		switch {
		case errors.As(err, &el):
			all = append(all, el...)
		case err != nil:
			return nil, invalid(fmt.Errorf("read sequence: %w", err))
		default:
			seqs = append(seqs, seq)
		}
	}
	if len(all) > 0 {
		return nil, invalid(all)
	}
	return seqs, nil
}

// bindSequence binds seq to the bench file (--bench, else the one beside
// the sequence), --port, --openocd and --gdb, with the --var values and
// limits, and returns the plan and the bench file read, if any. seq is not
// changed. An error names the flag that gave the binding.
func bindSequence(seq *steps.Sequence, benchPath string, f bindFlags, limits plan.Limits) (*plan.Plan, *steps.Bench, error) {
	bench, err := benchFor(seq, benchPath)
	if err != nil {
		return nil, nil, err
	}
	ports, err := portsFor(seq, f)
	if err != nil {
		return nil, nil, err
	}
	secrets, err := readSecrets(hostGates(), f.secrets, bench, steps.SecretNames(seq))
	if err != nil {
		return nil, nil, invalid(err)
	}
	pl, err := bindPlan(seq, plan.Sources{Bench: bench, Ports: ports, OpenOCDs: f.openocds, GDBs: f.gdbs, Vars: f.vars, Limits: limits, Secrets: secrets})
	return pl, bench, err
}

// bindPlan is where every command binds a sequence into a plan: run,
// validate, shards, pools and the REPL. An error names the flag that gave
// the binding.
func bindPlan(seq *steps.Sequence, src plan.Sources) (*plan.Plan, error) {
	pl, err := plan.Bind(seq, src)
	if err != nil {
		return nil, flagHint(err)
	}
	return pl, nil
}

// flagHint names the flag that gave a binding steps.Bind refused.
func flagHint(err error) error {
	var be *steps.BindError
	if errors.As(err, &be) {
		return fmt.Errorf("--%s %s=%s: %w", be.Kind, be.Name, be.Value, err)
	}
	return err
}

// benchFor loads the bench file given, else the one beside seq, else none.
func benchFor(seq *steps.Sequence, benchPath string) (*steps.Bench, error) {
	if benchPath == "" {
		p := filepath.Join(filepath.Dir(seq.File), steps.BenchFile)
		if _, err := os.Stat(p); err == nil {
			benchPath = p
		}
	}
	if benchPath == "" {
		return nil, nil
	}
	b, err := steps.LoadBench(hostGates().Files, benchPath)
	if err != nil {
		var el steps.ErrorList
		if errors.As(err, &el) {
			return nil, el
		}
		return nil, fmt.Errorf("read bench file: %w", err)
	}
	return b, nil
}
