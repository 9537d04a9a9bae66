package repl

import (
	"context"
	"errors"
	"testing"

	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

// loader is a debugger that loads images, and nothing else beyond the
// typed operations.
type loader struct {
	loaded, verified []string
	closed           bool
}

func (l *loader) ReadMemory(context.Context, uint64, int, int) ([]uint64, error) {
	return nil, errors.New("not used")
}
func (l *loader) WriteMemory(context.Context, uint64, int, []uint64) error {
	return errors.New("not used")
}
func (l *loader) Halt(context.Context) error          { return nil }
func (l *loader) Resume(context.Context) error        { return nil }
func (l *loader) Reset(context.Context, string) error { return nil }
func (l *loader) Close() error                        { l.closed = true; return nil }

func (l *loader) LoadImage(_ context.Context, path string, _ uint64) (string, error) {
	l.loaded = append(l.loaded, path)
	return "loaded " + path, nil
}

func (l *loader) VerifyImage(_ context.Context, path string, _ uint64) error {
	l.verified = append(l.verified, path)
	return nil
}

// The probe a session lends to each line keeps the session's optional
// abilities: upload: {openocd: {method: load}} loads through it, and the
// line's end does not close the session's probe.
func TestHeldProbeLoadsImages(t *testing.T) {
	l := &loader{}
	var held runner.Debugger = heldProbe{l}
	if _, ok := runner.DebuggerAs[runner.ImageLoader](held); !ok {
		t.Fatal("heldProbe hides ImageLoader")
	}
	seq, err := steps.Parse("line", []byte("steps:\n  - upload: {openocd: {file: /tmp/fw.bin, method: load, offset: 0x20008000, verify: true}}\n"), steps.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res := runner.Run(context.Background(), seq, runner.Bench{
		OpenProbe: func(context.Context, *steps.Probe) (runner.Debugger, error) { return held, nil },
	}, runner.Options{
		KeepSteps: true,
	})
	if res.Status != runner.Passed {
		t.Fatalf("upload through the held probe: %s %s %+v", res.Status, res.Error, res.Steps)
	}
	if len(l.loaded) != 1 || l.loaded[0] != "/tmp/fw.bin" || len(l.verified) != 1 {
		t.Errorf("loaded %v, verified %v", l.loaded, l.verified)
	}
	if l.closed {
		t.Error("the line's end closed the session's probe")
	}
}
