package cli

import "github.com/spf13/cobra"

// newReportCmd is hilrun report, the parent of the commands that work on
// reports after a run.
func newReportCmd(ios *IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Work on the reports of runs after the fact: merge the reports of shards",
	}
	cmd.AddCommand(newReportMergeCmd(ios))
	return cmd
}
