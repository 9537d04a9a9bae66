package report

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/hilrun/hilrun/pkg/gate/files"
)

// RunInfo is what a run's reports say about how it was started: the
// hilrun version, the command line and what each device and probe was
// bound to. It is written beside the event file (RunInfoFile) so that a
// report made later from the log folder says it too.
type RunInfo struct {
	Version string    `json:"version,omitempty"`
	Command []string  `json:"command,omitempty"`
	Started time.Time `json:"started,omitzero"`
	Bench   []Binding `json:"bench,omitempty"`
}

// Binding says what one device, probe or camera of a sequence ran on.
type Binding struct {
	Sequence string `json:"sequence"`
	Kind     string `json:"kind"` // "device", "probe" or "camera"
	Name     string `json:"name"`
	Target   string `json:"target"`
}

// RunInfoFile is the name of the run information file, beside the event
// file: "<stamp>-" + RunInfoFile for "<stamp>-events.jsonl".
const RunInfoFile = "run.json"

// WriteRunInfo writes info as JSON to path.
func WriteRunInfo(fs files.Policy, path string, info RunInfo) error {
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return fmt.Errorf("write the run information: %w", err)
	}
	if err := fs.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return fmt.Errorf("write the run information: %w", err)
	}
	if err := fs.WriteFile(path, append(b, '\n'), 0o666); err != nil {
		return fmt.Errorf("write the run information: %w", err)
	}
	return nil
}

// ReadRunInfo reads a file WriteRunInfo wrote.
func ReadRunInfo(fs files.Policy, path string) (RunInfo, error) {
	var info RunInfo
	b, err := fs.ReadFile(path)
	if err != nil {
		return info, fmt.Errorf("read the run information: %w", err)
	}
	if err := json.Unmarshal(b, &info); err != nil {
		return info, fmt.Errorf("read the run information %s: %w", path, err)
	}
	return info, nil
}
