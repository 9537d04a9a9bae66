package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hilrun/hilrun/pkg/steps"
)

// completeSequences makes cmd's arguments complete to sequence files (and
// folders), and its binding flags to the names the sequences already on
// the command line declare: --port to their devices, --openocd and --gdb
// to their probes, each as NAME=.
func completeSequences(cmd *cobra.Command) {
	cmd.ValidArgsFunction = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		// The shell wants the endings without their dots.
		exts := make([]string, len(sequenceExts))
		for i, e := range sequenceExts {
			exts[i] = strings.TrimPrefix(e, ".")
		}
		return exts, cobra.ShellCompDirectiveFilterFileExt
	}
	names := func(probes bool) cobra.CompletionFunc {
		return func(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if strings.Contains(toComplete, "=") {
				// After NAME=, a path: the shell's own file completion.
				return nil, cobra.ShellCompDirectiveDefault
			}
			return declaredNames(args, probes), cobra.ShellCompDirectiveNoSpace
		}
	}
	for flag, probes := range map[string]bool{"port": false, "openocd": true, "gdb": true} {
		if cmd.Flags().Lookup(flag) != nil {
			_ = cmd.RegisterFlagCompletionFunc(flag, names(probes))
		}
	}
}

// declaredNames returns NAME= for each device (or probe) that the sequence
// files among args declare. Files that do not load are left out: a
// completion never prints errors.
func declaredNames(args []string, probes bool) []string {
	seen := map[string]bool{}
	var out []string
	for _, a := range args {
		if fi, err := os.Stat(a); err != nil || fi.IsDir() || !isSequenceFile(a) {
			continue
		}
		seq, err := steps.Load(hostGates().Files, a, steps.LoadOptions{})
		if err != nil {
			continue
		}
		var names []string
		if probes {
			for _, p := range seq.Probes {
				names = append(names, p.Name)
			}
		} else {
			for _, d := range seq.Devices {
				names = append(names, d.Name)
			}
		}
		for _, n := range names {
			if !seen[n] {
				seen[n] = true
				out = append(out, n+"=")
			}
		}
	}
	return out
}

func isSequenceFile(path string) bool {
	return slices.Contains(sequenceExts, strings.ToLower(filepath.Ext(path))) && !isBenchName(path) && !isPoolName(path)
}
