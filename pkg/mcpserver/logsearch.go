package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hilrun/hilrun/pkg/gate/files"
)

// Bounds of log_search: a search reads the whole log, line by line, and
// keeps at most this much of it.
const (
	defaultSearchResults = 100
	maxSearchResults     = 1000
	maxSearchContext     = 20
	// maxSearchLine is how much of one line is matched; the rest of a
	// longer line is not looked at.
	maxSearchLine = 64 << 10
	// maxSearchText is how much of a line a match shows.
	maxSearchText = 4 << 10
	// maxSearchBytes bounds the text of all the matches kept; past it the
	// oldest are dropped and the result says truncated.
	maxSearchBytes = 1 << 20
)

type logSearchArgs struct {
	Connection   string `json:"connection"`
	ConnectionID string `json:"connection_id"`
	Pattern      string `json:"pattern"`
	Regex        bool   `json:"regex"`
	MaxResults   *int   `json:"max_results"`
	Context      int    `json:"context"`
	Days         *int   `json:"days"`
}

type logMatch struct {
	File   string   `json:"file"`
	Line   int      `json:"line"`
	Offset int64    `json:"offset"`
	Text   string   `json:"text"`
	Before []string `json:"before"`
	After  []string `json:"after"`
	size   int
}

type logSearchResult struct {
	ConnectionID  string     `json:"connection_id"`
	Matches       []logMatch `json:"matches"`
	Truncated     bool       `json:"truncated"`
	FilesSearched int        `json:"files_searched"`
}

func (s *Server) logSearch(ctx context.Context, req mcp.CallToolRequest, a *logSearchArgs) (any, string, error) {
	if a.Pattern == "" {
		return nil, "", errors.New("pattern is required and must not be empty")
	}
	max := defaultSearchResults
	if a.MaxResults != nil {
		max = *a.MaxResults
	}
	if max < 1 || max > maxSearchResults {
		return nil, "", fmt.Errorf("max_results must be from 1 to %d, found %d", maxSearchResults, max)
	}
	if a.Context < 0 || a.Context > maxSearchContext {
		return nil, "", fmt.Errorf("context must be from 0 to %d, found %d", maxSearchContext, a.Context)
	}
	if a.Days != nil && *a.Days < 1 {
		return nil, "", fmt.Errorf("days must be 1 or more, found %d", *a.Days)
	}
	match := func(line []byte) bool { return bytes.Contains(line, []byte(a.Pattern)) }
	if a.Regex {
		re, err := regexp.Compile(a.Pattern)
		if err != nil {
			return nil, "", fmt.Errorf("pattern: %w", err)
		}
		match = re.Match
	}
	c, err := s.connection(first(a.Connection, a.ConnectionID))
	if err != nil {
		return nil, "", err
	}
	raw, _ := c.console.LogPaths()
	if raw == "" {
		return nil, "", fmt.Errorf("connection %s keeps no log", c.id)
	}
	ms, truncated, err := searchLog(ctx, s.own, raw, match, max, a.Context)
	if err != nil {
		return nil, "", err
	}
	out := logSearchResult{ConnectionID: c.id, Matches: ms, Truncated: truncated, FilesSearched: 1}
	var b strings.Builder
	fmt.Fprintf(&b, "%d matches in %s", len(ms), raw)
	if truncated {
		b.WriteString(" (truncated: more, older ones exist)")
	}
	for _, m := range ms {
		fmt.Fprintf(&b, "\nline %d (offset %d): %s", m.Line, m.Offset, m.Text)
	}
	return out, b.String(), nil
}

// searchLog reads the log file path, as long as it is now, line by line
// and returns the last max lines match accepts, newest first, with context
// lines around each; truncated says older matches were left out.
func searchLog(ctx context.Context, fs files.Policy, path string, match func([]byte) bool, max, context int) (ms []logMatch, truncated bool, err error) {
	f, err := fs.Open(path)
	if err != nil {
		return nil, false, fmt.Errorf("search the log: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, fmt.Errorf("search the log: %w", err)
	}
	r := bufio.NewReaderSize(io.LimitReader(f, fi.Size()), 64<<10)
	var (
		kept   []*logMatch // oldest first
		size   int
		before []string // the last context lines
		line   []byte
		n      int
		off    int64
	)
	for {
		if n%4096 == 0 && ctx.Err() != nil {
			return nil, false, fmt.Errorf("search the log: %w", ctx.Err())
		}
		start := off
		line = line[:0]
		full := false
		for {
			chunk, rerr := r.ReadSlice('\n')
			off += int64(len(chunk))
			if room := maxSearchLine - len(line); room > 0 {
				line = append(line, chunk[:min(len(chunk), room)]...)
			}
			if rerr == bufio.ErrBufferFull {
				continue
			}
			if rerr != nil && rerr != io.EOF {
				return nil, false, fmt.Errorf("search the log: %w", rerr)
			}
			full = rerr == nil
			break
		}
		if len(line) == 0 && !full {
			break // end of the log
		}
		n++
		body := bytes.TrimRight(line, "\r\n")
		text := lineText(body)
		for i := len(kept) - 1; i >= 0 && kept[i].Line >= n-context; i-- {
			if m := kept[i]; len(m.After) < context {
				m.After = append(m.After, text)
				m.size += len(text)
				size += len(text)
			}
		}
		if match(body) {
			m := &logMatch{File: path, Line: n, Offset: start, Text: text, Before: append([]string{}, before...), After: []string{}}
			m.size = len(text)
			for _, b := range before {
				m.size += len(b)
			}
			kept = append(kept, m)
			size += m.size
			for len(kept) > max || (size > maxSearchBytes && len(kept) > 1) {
				size -= kept[0].size
				kept = kept[1:]
				truncated = true
			}
		}
		if context > 0 {
			if len(before) == context {
				before = append(before[:0], before[1:]...)
			}
			before = append(before, text)
		}
		if !full {
			break
		}
	}
	ms = make([]logMatch, 0, len(kept))
	for i := len(kept) - 1; i >= 0; i-- {
		ms = append(ms, *kept[i])
	}
	return ms, truncated, nil
}

// lineText is a log line as a match shows it: valid UTF-8, at most
// maxSearchText bytes.
func lineText(b []byte) string {
	cut := len(b) > maxSearchText
	if cut {
		b = b[:maxSearchText]
	}
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	if cut {
		s += "…"
	}
	return s
}
