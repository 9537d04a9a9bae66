package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/hilrun/hilrun/pkg/openocd"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

// openProbe opens one persistent OpenOCD session per probe: attached to a
// running OpenOCD, or to one hilrun launches and stops with the run.
func openProbe(logDir string) runner.ProbeOpener {
	return func(ctx context.Context, p *steps.Probe) (runner.Debugger, error) {
		if p.OpenOCD != "" {
			s, err := openocd.Dial(ctx, p.OpenOCD)
			if err != nil {
				return nil, err
			}
			return s, nil
		}
		cfg := openocd.LaunchConfig{
			Binary:        p.Launch.Binary,
			Configs:       p.Launch.Config,
			Commands:      p.Launch.Commands,
			AdapterSerial: p.Launch.AdapterSerial,
			Args:          p.Launch.Args,
		}
		if logDir != "" {
			cfg.LogFile = logDir + "/openocd-" + p.Name + ".log"
		}
		proc, err := openocd.Launch(ctx, cfg)
		if err != nil {
			return nil, err
		}
		s, err := proc.Dial(ctx)
		if err != nil {
			proc.Stop()
			return nil, err
		}
		return &launched{Session: s, proc: proc}, nil
	}
}

// launched is a session with the OpenOCD process behind it; closing it
// stops the process.
type launched struct {
	*openocd.Session
	proc *openocd.Process
}

func (l *launched) Close() error {
	return errors.Join(l.Session.Close(), l.proc.Stop())
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
