package cli

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/hilrun/hilrun/internal/engine"
	"github.com/hilrun/hilrun/pkg/openocd"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

// openProbe opens one persistent OpenOCD session per probe: attached to a
// running OpenOCD, or to one hilrun launches and stops with the run.
func openProbe(logDir string) runner.ProbeOpener {
	return func(ctx context.Context, p *steps.Probe) (runner.Debugger, error) {
		launch := engine.LaunchConfig(p)
		if launch != nil && logDir != "" {
			launch.LogFile = filepath.Join(logDir, "openocd-"+p.Name+".log")
		}
		d, err := openocd.Open(ctx, p.OpenOCD, launch)
		if err != nil {
			return nil, err
		}
		return d, nil
	}
}

// checkProbes makes sure every probe can be reached somehow and that every
// symbol the steps name exists, before anything is opened.
func checkProbes(seq *steps.Sequence) error {
	var errs steps.ErrorList
	for _, p := range seq.Probes {
		switch {
		case p.OpenOCD != "":
		case p.Launch != nil && len(p.Launch.Config) > 0:
		case p.Launch != nil:
			errs = append(errs, &steps.Error{Pos: p.Pos, Msg: fmt.Sprintf("probe %s: launch needs config files (config: [interface/stlink.cfg, target/stm32f4x.cfg]) in the sequence or the bench file", p.Name)})
		default:
			errs = append(errs, &steps.Error{Pos: p.Pos, Msg: fmt.Sprintf("probe %s has no OpenOCD: give it openocd: HOST:PORT or launch: {config: [...]} in the sequence or %s, pass --openocd %s=HOST:PORT, or use --sim", p.Name, steps.BenchFile, p.Name)})
		}
	}
	steps.Walk(seq, func(s *steps.Step) {
		if s.Mem == nil || s.Mem.Symbol == "" {
			return
		}
		elf := s.Mem.ELF
		if elf == "" {
			if p := seq.Probe(s.To); p != nil {
				elf = p.ELF
			}
		}
		if elf == "" {
			errs = append(errs, &steps.Error{Pos: s.Pos, Msg: fmt.Sprintf("symbol %s needs an ELF file: set elf: on the step or on probe %s", s.Mem.Symbol, s.To)})
			return
		}
		if _, _, err := openocd.LookupSymbol(elf, s.Mem.Symbol); err != nil {
			errs = append(errs, &steps.Error{Pos: s.Pos, Msg: err.Error()})
		}
	})
	if len(errs) > 0 {
		return errs
	}
	return nil
}
