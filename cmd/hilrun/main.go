// Command hilrun runs declarative hardware-in-the-loop test sequences.
package main

import (
	"os"

	"github.com/hilrun/hilrun/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
