package cli

import (
	"github.com/spf13/pflag"

	"github.com/hilrun/hilrun/pkg/steps"
)

// ExprFlags are the budgets of each evaluation of an expression, which
// run, repl and mcp share: a sequence file from a pull request is input
// as much as an MCP client's steps.
type ExprFlags struct {
	// Work bounds the operations of one evaluation; 0 means
	// steps.DefaultExprWork.
	Work int
	// Memory bounds the lists and maps one evaluation makes, in bytes; 0
	// means steps.DefaultExprMemory.
	Memory int
}

func (e *ExprFlags) register(f *pflag.FlagSet) {
	f.IntVar(&e.Work, "max-expr-work", steps.DefaultExprWork, "let one evaluation of an expression do at most `N` operations (an element a loop or a function goes through, or 64 bytes of text scanned): past it, its step ends with an error")
	e.Memory = steps.DefaultExprMemory
	f.Var(bytesFlag{&e.Memory}, "max-expr-memory", "let one evaluation of an expression make lists and maps of at most `BYTES` in all, at 16 bytes an item (like 64MiB; default 16MiB): past it, its step ends with an error")
}
