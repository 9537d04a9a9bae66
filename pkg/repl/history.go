package repl

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/hilrun/hilrun/pkg/gate/files"
)

// DefaultHistoryLimit is how many lines a history file keeps when
// Options.HistoryLimit is 0.
const DefaultHistoryLimit = 1000

// History is the line history of the REPL, kept in memory and in a file
// that later sessions read back. It satisfies term.History. It holds at
// most limit lines; the oldest go first.
type History struct {
	mu    sync.Mutex
	path  string
	limit int
	lines []string // oldest first
}

// LoadHistory reads the history file at path; a missing file is an empty
// history. An empty path keeps the history in memory only. The file is
// read through fs.
func LoadHistory(fs files.Policy, path string, limit int) *History {
	if limit <= 0 {
		limit = DefaultHistoryLimit
	}
	h := &History{path: path, limit: limit}
	if path == "" {
		return h
	}
	f, err := fs.Open(path)
	if err != nil {
		return h
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		if l := sc.Text(); strings.TrimSpace(l) != "" {
			h.lines = append(h.lines, l)
		}
	}
	h.trim()
	return h
}

func (h *History) trim() {
	if over := len(h.lines) - h.limit; over > 0 {
		h.lines = append(h.lines[:0], h.lines[over:]...)
	}
}

// Add records a line; a repeat of the previous line is not stored twice.
func (h *History) Add(entry string) {
	if strings.TrimSpace(entry) == "" || strings.ContainsAny(entry, "\r\n") {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if n := len(h.lines); n > 0 && h.lines[n-1] == entry {
		return
	}
	h.lines = append(h.lines, entry)
	h.trim()
}

// Len is the number of lines held.
func (h *History) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.lines)
}

// At returns a line; 0 is the most recent.
func (h *History) At(i int) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lines[len(h.lines)-1-i]
}

// Save writes the history file, through a temporary file so a crash never
// leaves it half written.
func (h *History) Save() error {
	if h.path == "" {
		return nil
	}
	h.mu.Lock()
	data := strings.Join(h.lines, "\n")
	h.mu.Unlock()
	if data != "" {
		data += "\n"
	}
	tmp, err := os.CreateTemp(filepath.Dir(h.path), ".hilrun_history.*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), h.path)
}
