package cli

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/hilrun/hilrun"
	"github.com/hilrun/hilrun/pkg/steps"
)

// ValidateOptions are the inputs of hilrun validate.
type ValidateOptions struct {
	Files []string
	Vars  []string
	// BindFlags are --port and --probe (--openocd, --gdb), as run will
	// get them.
	BindFlags
	Bench string
	Sim   bool
	// Pool checks the sequences against every bench of a pool file, as
	// run --pool does.
	Pool string
	// Select is -m and --quarantine, checked as run will get them.
	Select SelectOptions
}

func newValidateCmd(ios *IO) *cobra.Command {
	opts := &ValidateOptions{}
	cmd := &cobra.Command{
		Use:   "validate [flags] FILE|DIR...",
		Short: "Check sequence and bench files without touching any port",
		Long: `Check sequence files as hilrun run does before it opens a port: keys,
types, durations, regular expressions, expressions, devices and variables;
the bench file beside each sequence (or --bench), power steps without a
power entry, steps the probe's backend cannot run, symbols missing from
ELF files, upload images that are not there. A sequence that validate
passes with the flags run will get is not refused by run.

Bench files (hilrun.bench.yaml, *.bench.yaml, or any file that holds only
devices:, probes:, cameras: and power:) are checked as bench files. A
folder stands for the sequence files under it.

Each problem is printed as FILE:LINE:COL: message. A device or probe that
nothing binds yet, and a --var no sequence uses, are warnings. Exit code 2
when any file is invalid.`,
		Example: `  hilrun validate sequences/boards/*.yaml
  hilrun validate --sim sequences/sim
  hilrun validate --quarantine quarantine.yaml -m 'smoke and not slow' sequences/sim`,
		Args: needFiles("validate"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Files = args
			return Validate(ios, opts)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&opts.Vars, "var", nil, "a variable that run will get with --var, `NAME=VALUE`")
	opts.BindFlags.register(f, true)
	f.StringVar(&opts.Bench, "bench", "", "bench `FILE` run will get with --bench (default: "+steps.BenchFile+" beside the sequence)")
	f.BoolVar(&opts.Sim, "sim", false, "check as run --sim would: the virtual board binds what is still unbound")
	f.StringVar(&opts.Pool, "pool", "", "check the sequences against every bench of the pool `FILE`, as run --pool does")
	opts.Select.register(f)
	completeSequences(cmd)
	return cmd
}

// Validate checks the files of opts as hilrun run would before it opens
// anything, and prints one ok line per file.
func Validate(ios *IO, opts *ValidateOptions) error {
	fl, err := parseFlags(opts.Vars, &opts.BindFlags)
	if err != nil {
		return err
	}
	files, err := expandFiles(opts.Files)
	if err != nil {
		return invalid(err)
	}
	seqFiles, benchFiles := splitBenchFiles(dropQuarantine(files, opts.Select.Quarantine))
	seqFiles, poolFiles := splitPoolFiles(seqFiles)
	errs, pools := loadPools(poolFiles)
	var benches []*steps.Bench
	for _, f := range benchFiles {
		b, err := steps.LoadBench(hostGates().Files, f)
		var el steps.ErrorList
		switch {
		case errors.As(err, &el):
			errs = append(errs, el...)
		case err != nil:
			return invalid(fmt.Errorf("read bench file: %w", err))
		default:
			benches = append(benches, b)
		}
	}
	var seqs []*steps.Sequence
	if len(seqFiles) > 0 {
		simELF := &simImage{}
		defer simELF.remove()
		po := prepareOptions{Files: seqFiles, Bench: opts.Bench, Flags: fl, Sim: opts.Sim, Unbound: true, Warn: warnTo(ios.ErrOut), SimELF: simELF.path, Select: opts.Select}
		var prep *prepared
		if opts.Pool != "" {
			prep, err = preparePool(opts.Pool, po)
		} else {
			prep, err = prepare(po)
		}
		var el steps.ErrorList
		switch {
		case err == nil:
			seqs = prep.seqs
		case errors.As(err, &el) && len(errs) > 0:
			errs = append(errs, el...)
		default:
			if len(errs) > 0 {
				// Printed whole: an ErrorList inside would be printed alone.
				return invalid(fmt.Errorf("%s\n%w", errs.Error(), errors.Unwrap(err)))
			}
			return err
		}
	}
	if len(errs) > 0 {
		return invalid(errs)
	}
	// In the order given.
	for _, f := range files {
		if i := slices.IndexFunc(benches, func(b *steps.Bench) bool { return b.File == f }); i >= 0 {
			b := benches[i]
			fmt.Fprintf(ios.Out, "%s: ok (bench: %s, %s, %s, %s%s)\n", f, count(len(b.Devices), "device"), count(len(b.Probes), "probe"), count(len(b.Cameras), "camera"), count(len(b.Power), "power entry"), ladderNote(b.Ladder))
			continue
		}
		if i := slices.IndexFunc(pools, func(p *steps.Pool) bool { return p.File == f }); i >= 0 {
			fmt.Fprintf(ios.Out, "%s: ok (pool: %s)\n", f, count(len(pools[i].Benches), "bench"))
			continue
		}
		if i := slices.IndexFunc(seqs, func(s *steps.Sequence) bool { return s.File == f }); i >= 0 {
			s := seqs[i]
			fmt.Fprintf(ios.Out, "%s: ok (%s, %s)\n", s.File, s.Name, steps.CountedPlan(s))
		}
	}
	return nil
}

func count(n int, what string) string {
	switch {
	case n == 1:
		return "1 " + what
	case what == "power entry":
		return fmt.Sprintf("%d power entries", n)
	case strings.HasSuffix(what, "ch"):
		return fmt.Sprintf("%d %ses", n, what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// isBenchFile says whether path is a bench file: by its name
// (hilrun.bench.yaml, *.bench.yaml), else by its content, a mapping with
// some of devices:, probes:, cameras:, power:, health:, recover: and
// nothing else (a sequence has steps:). A file that cannot be read or
// parsed is taken as a sequence, whose loader says what is wrong with it.
func isBenchFile(path string) bool {
	if isBenchName(path) {
		return true
	}
	data, err := steps.ReadFile(hostGates().Files, path)
	if err != nil {
		return false
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil || len(root.Content) == 0 {
		return false
	}
	m := root.Content[0]
	if m.Kind != yaml.MappingNode || len(m.Content) == 0 {
		return false
	}
	bench := false
	for i := 0; i+1 < len(m.Content); i += 2 {
		switch m.Content[i].Value {
		case "devices", "probes", "cameras", "power", "health", "recover":
			bench = true
		case "$schema":
		default:
			return false
		}
	}
	return bench
}

func newSchemaCmd(ios *IO) *cobra.Command {
	var bench, pool, quarantine bool
	cmd := &cobra.Command{
		Use:   "schema [--bench|--pool|--quarantine]",
		Short: "Print the JSON Schema of sequence files (or of bench files, pool files or quarantine lists)",
		Long: `Print the JSON Schema (2020-12) of sequence files, or with --bench of bench
files, --pool of pool files, --quarantine of quarantine lists. Editors that
speak the YAML language server complete and check files that begin with
# yaml-language-server: $schema=PATH-OR-URL`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case pool:
				return writeSchemaBytes(ios.Out, hilrun.PoolSchema)
			case quarantine:
				return writeSchemaBytes(ios.Out, hilrun.QuarantineSchema)
			}
			return writeSchema(ios.Out, bench)
		},
	}
	cmd.Flags().BoolVar(&bench, "bench", false, "print the schema of bench files")
	cmd.Flags().BoolVar(&pool, "pool", false, "print the schema of pool files (its benches refer to bench.schema.json beside it)")
	cmd.Flags().BoolVar(&quarantine, "quarantine", false, "print the schema of quarantine lists (--quarantine FILE)")
	cmd.MarkFlagsMutuallyExclusive("bench", "pool", "quarantine")
	return cmd
}

func writeSchema(w io.Writer, bench bool) error {
	s := hilrun.SequenceSchema
	if bench {
		s = hilrun.BenchSchema
	}
	return writeSchemaBytes(w, s)
}

func writeSchemaBytes(w io.Writer, s []byte) error {
	if _, err := w.Write(s); err != nil {
		return infra(err)
	}
	return nil
}
