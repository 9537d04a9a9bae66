package cli

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/hilrun/hilrun/internal/engine"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/serialx"
	"github.com/hilrun/hilrun/pkg/steps"
)

// runBuild runs build and upload tools, writing each tool's whole output
// under logDir.
func runBuild(logDir string) runner.Builder {
	return engine.Builder(func(s *steps.Step) string {
		if logDir == "" {
			return ""
		}
		return filepath.Join(logDir, fmt.Sprintf("%s-line%d.log", s.Kind, s.Pos.Line))
	}, nil, nil)
}

// handoverConsole lets the runner release a console's port for an upload
// and take it back, following a USB device that re-enumerates.
type handoverConsole struct {
	*serialx.Console
	resolve func(ctx context.Context) (string, error)
}

func (c *handoverConsole) Reacquire(ctx context.Context) error {
	return c.Console.Reacquire(ctx, serialx.ReacquireOptions{Resolve: c.resolve})
}
