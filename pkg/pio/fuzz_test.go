package pio

import (
	"os"
	"path/filepath"
	"testing"
)

// seedOutputs adds every recorded PlatformIO output as a seed.
func seedOutputs(f *testing.F) {
	paths, _ := filepath.Glob("testdata/*.txt")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// FuzzTextParsers feeds any output to the parsers of PlatformIO's text and
// JSON answers: they return an error or a value, never panic.
func FuzzTextParsers(f *testing.F) {
	seedOutputs(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		ParseTestReport(b)
		ParseSearch(string(b))
		ParseLibraryList(string(b))
		parseConfig(b)
		objectKeys(b)
		var boards []rawBoard
		decodeJSON("fuzz", b, &boards)
	})
}
