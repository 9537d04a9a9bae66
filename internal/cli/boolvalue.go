package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// boolFlagValue catches a switch given its value as a separate word,
// --recover false: a switch takes no word after it, so false would be
// read as a file or a command. It returns a usage error that says how to
// write it, or nil.
func boolFlagValue(root *cobra.Command, args []string) error {
	cmd, _, err := root.Find(args)
	if err != nil {
		return nil // cobra says what is wrong
	}
	for i := 0; i+1 < len(args); i++ {
		a := args[i]
		if a == "--" {
			return nil
		}
		var f *pflag.Flag
		switch {
		case strings.HasPrefix(a, "--") && !strings.Contains(a, "="):
			f = lookupFlag(cmd, a[2:], "")
		case len(a) == 2 && a[0] == '-' && a[1] != '-':
			f = lookupFlag(cmd, "", a[1:])
		}
		if f == nil {
			continue
		}
		if f.NoOptDefVal == "" {
			i++ // the flag's value, whatever it looks like
			continue
		}
		// Only the words a person writes for a switch: 1, t or yes are
		// more likely a board, a query or a count (hilrun pio's).
		v := args[i+1]
		if v != "true" && v != "false" {
			continue
		}
		return invalid(fmt.Errorf("%s %s: a switch takes its value after '=', as --%s=%s; on its own, %s would be read as the next argument (a file's name, a command's); to pass the word itself, put it after --", a, v, f.Name, v, v))
	}
	return nil
}

// lookupFlag finds cmd's flag by name or shorthand, its own or one it
// inherits.
func lookupFlag(cmd *cobra.Command, name, short string) *pflag.Flag {
	for _, fs := range []*pflag.FlagSet{cmd.Flags(), cmd.InheritedFlags()} {
		if name != "" {
			if f := fs.Lookup(name); f != nil {
				return f
			}
		} else if f := fs.ShorthandLookup(short); f != nil {
			return f
		}
	}
	return nil
}
