package cli

import (
	"strconv"

	"github.com/spf13/pflag"
)

// recoverFlag is --recover, true by default, stored as its negation
// (the options' NoRecover) so that options left zero keep the ladders.
type recoverFlag struct{ off *bool }

// registerRecover registers --recover on f, usage saying what it turns
// on for the command.
func registerRecover(f *pflag.FlagSet, off *bool, usage string) {
	f.AddFlag(&pflag.Flag{Name: "recover", Usage: usage + "; --recover=false leaves them out", Value: recoverFlag{off}, DefValue: "true", NoOptDefVal: "true"})
}

func (r recoverFlag) String() string { return strconv.FormatBool(r.off == nil || !*r.off) }

func (r recoverFlag) Type() string { return "bool" }

func (r recoverFlag) Set(s string) error {
	on, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	*r.off = !on
	return nil
}
