package mcpserver

import (
	"errors"
	"fmt"

	"github.com/hilrun/hilrun/pkg/plan"
)

// secretError says where a missing secret could come from on this
// server: its own flags and bench, never what a client sends or a file
// beside a client's sequence says (which the plan was never given).
func secretError(err error) error {
	var missing *plan.MissingSecretError
	if !errors.As(err, &missing) {
		return err
	}
	return fmt.Errorf("%s: secret %s has no value on this server: secrets come only from hilrun mcp --secret and the server's --bench, never from a client's request or files (a bench file beside the sequence gives none)", missing.Pos, missing.Name)
}
