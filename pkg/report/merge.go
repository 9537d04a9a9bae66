package report

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hilrun/hilrun/pkg/results"
)

// ErrNotReport is wrapped by the errors of ReadSequences, MergeJSON and
// MergeJUnit for an input that is not a report hilrun wrote: invalid
// input, not a failure to read.
var ErrNotReport = errors.New("not a hilrun report")

// ErrDuplicate is wrapped by the errors of MergeJSON and MergeJUnit when
// two reports hold the same sequence.
var ErrDuplicate = errors.New("each sequence runs in one shard only")

// SequenceHead is what a JSON report says about one sequence, steps left
// out.
type SequenceHead struct {
	Name   string `json:"name"`
	File   string `json:"file"`
	Status string `json:"status"`
	// Interrupted is true when Ctrl-C or SIGTERM stopped the sequence.
	Interrupted bool `json:"interrupted,omitempty"`
	// Flaky is true when the sequence passed only after a retry.
	Flaky      bool           `json:"flaky,omitempty"`
	DurationMS results.Millis `json:"duration_ms"`
	Counts     results.Counts `json:"counts"`
}

// Key is what tells sequences apart across reports: the file it came
// from (slash-separated, cleaned), else its name.
func (h SequenceHead) Key() string { return sequenceKey(h.File, h.Name) }

func sequenceKey(file, name string) string {
	if file != "" {
		return filepath.ToSlash(filepath.Clean(file))
	}
	return "name:" + name
}

// describe names a sequence for an error message.
func describe(name, file string) string {
	if file == "" {
		return strconv.Quote(name)
	}
	return fmt.Sprintf("%q (%s)", name, file)
}

// readErr says that a file ended early rather than "EOF".
func readErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("the file ends early")
	}
	return err
}

// checkUnique fails when two spans stand for the same sequence, naming it
// and the files that hold it.
func checkUnique[T any](items []T, key func(T) string, name func(T) string, src func(T) string) error {
	seen := map[string]T{}
	var dups []string
	for _, it := range items {
		k := key(it)
		if prev, ok := seen[k]; ok {
			where := fmt.Sprintf("in both %s and %s", src(prev), src(it))
			if src(prev) == src(it) {
				where = "twice in " + src(it)
			}
			dups = append(dups, fmt.Sprintf("sequence %s is %s", name(it), where))
			continue
		}
		seen[k] = it
	}
	if len(dups) > 0 {
		return fmt.Errorf("%s: %w", strings.Join(dups, "; "), ErrDuplicate)
	}
	return nil
}
