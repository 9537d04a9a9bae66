package steps_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/steps"
)

// The loaders' fuzz targets. Their seed corpora are the files under
// testdata/fuzz/FuzzXxx (go test fuzz v1) and the repository's own
// sequences, bench files and schema test files. Run one for a while with
//
//	go test -run '^$' -fuzz '^FuzzLoad$' -fuzztime 1m ./pkg/steps

// maxInputTime bounds how long the loaders may take over one fuzz input:
// far above what any input of the fuzzer's sizes needs, it only catches a
// hang (an alias bomb, a runaway loop).
const maxInputTime = 10 * time.Second

// maxInputAlloc bounds the bytes the loaders may allocate over one fuzz
// input of n bytes: a small file never needs hundreds of megabytes, an
// alias bomb does.
func maxInputAlloc(n int) uint64 { return 256<<20 + 1024*uint64(n) }

// allocated returns the bytes this process has allocated on the heap so far.
func allocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// bounded runs load, and fails when it takes longer than maxInputTime or
// allocates more than maxInputAlloc for n input bytes.
func bounded(t *testing.T, n int, load func()) {
	t.Helper()
	// A hang never returns to fail the test: the watchdog crashes the
	// process instead, and the fuzzer keeps the input that did it.
	watchdog := time.AfterFunc(maxInputTime, func() {
		panic(fmt.Sprintf("loading %d bytes takes more than %v", n, maxInputTime))
	})
	a0 := allocated()
	load()
	watchdog.Stop()
	if a := allocated() - a0; a > maxInputAlloc(n) {
		t.Fatalf("loading %d bytes allocated %d bytes, more than %d", n, a, maxInputAlloc(n))
	}
}

// checkLoadError fails the test unless err is an ErrorList whose entries
// all name the file, a line and a column.
func checkLoadError(t *testing.T, file string, err error) {
	t.Helper()
	var el steps.ErrorList
	if !errors.As(err, &el) || len(el) == 0 {
		t.Fatalf("error is not a positioned ErrorList: %v", err)
	}
	for _, e := range el {
		if e.Pos.File != file || e.Pos.Line < 1 || e.Pos.Col < 1 {
			t.Fatalf("error without a position in %s: %v", file, e)
		}
		if strings.TrimSpace(e.Msg) == "" {
			t.Fatalf("error without a message: %v", e)
		}
	}
}

// addRepoFiles adds the repository's files matching the globs as seeds,
// with isJSON set from their extension.
func addRepoFiles(f *testing.F, keep func(string) bool, globs ...string) {
	for _, glob := range globs {
		files, _ := filepath.Glob(glob)
		for _, file := range files {
			if !keep(file) {
				continue
			}
			if data, err := os.ReadFile(file); err == nil {
				f.Add(data, strings.EqualFold(filepath.Ext(file), ".json"))
			}
		}
	}
}

func isBench(file string) bool { return strings.HasSuffix(file, ".bench.yaml") }

// FuzzLoad feeds arbitrary bytes to the sequence loader, as a .json file
// when isJSON is set and as a .yaml file otherwise. Whatever the input, it
// returns a sequence or an ErrorList whose entries all have a position, in
// bounded time and memory, and never panics.
func FuzzLoad(f *testing.F) {
	addRepoFiles(f, func(file string) bool { return !isBench(file) },
		"../../sequences/*/*", "../../testdata/schema/*/*")
	f.Fuzz(func(t *testing.T, data []byte, isJSON bool) {
		file := "fuzz.yaml"
		if isJSON {
			file = "fuzz.json"
		}
		var seq *steps.Sequence
		var err error
		bounded(t, len(data), func() { seq, err = steps.Parse(file, data, steps.LoadOptions{}) })
		if err == nil {
			if seq == nil {
				t.Fatal("nil sequence without an error")
			}
			return
		}
		checkLoadError(t, file, err)
	})
}

// FuzzLoadBench feeds arbitrary bytes to the bench file loader, with the
// same properties as FuzzLoad.
func FuzzLoadBench(f *testing.F) {
	addRepoFiles(f, isBench, "../../sequences/*/*", "../../testdata/schema/*/*")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, isJSON bool) {
		// LoadBench reads a file: the input goes to one, rewritten for
		// each input (the fuzz function runs inputs one at a time).
		file := filepath.Join(dir, "fuzz.bench.yaml")
		if isJSON {
			file = filepath.Join(dir, "fuzz.bench.json")
		}
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		var b *steps.Bench
		var err error
		bounded(t, len(data), func() { b, err = steps.LoadBench(files.Anywhere(), file) })
		if err == nil {
			if b == nil {
				t.Fatal("nil bench without an error")
			}
			return
		}
		checkLoadError(t, file, err)
	})
}
