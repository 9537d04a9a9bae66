package steps

import (
	"fmt"
	"strings"
)

// Pos is a position in a sequence file. Line and Col count from 1; zero means
// unknown. Pointer, in a sequence given as a value (ParseValue), is the
// JSON pointer (RFC 6901) of the place instead, like /steps/3/expect; ""
// there is the whole value.
type Pos struct {
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Col     int    `json:"column,omitempty"`
	Pointer string `json:"pointer,omitempty"`
}

// String formats p as FILE:LINE:COL, leaving out what is unknown, or as
// FILE: POINTER when p has a pointer.
func (p Pos) String() string {
	s := p.File
	if s == "" {
		s = "<input>"
	}
	if p.Pointer != "" {
		return s + ": " + p.Pointer
	}
	if p.Line > 0 {
		s += fmt.Sprintf(":%d", p.Line)
		if p.Col > 0 {
			s += fmt.Sprintf(":%d", p.Col)
		}
	}
	return s
}

// Error is one problem found in a sequence file, at a position.
type Error struct {
	Pos Pos
	Msg string
	// Missing is the file the problem is about when the problem is only
	// that the file does not exist yet: an image or ELF file that a build
	// makes. validate notes it, where run refuses it.
	Missing string
}

func (e *Error) Error() string { return e.Pos.String() + ": " + e.Msg }

// ErrorList is every problem found in one or more sequence files, in file
// order. Its Error is one line per problem.
type ErrorList []*Error

func (l ErrorList) Error() string {
	lines := make([]string, len(l))
	for i, e := range l {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap lets errors.As find each *Error.
func (l ErrorList) Unwrap() []error {
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errs
}

// MaxErrors is how many problems one file reports; the rest are counted.
const MaxErrors = 100

// errs collects problems while a file is decoded.
type errs struct {
	file    string
	list    ErrorList
	dropped int
}

func (e *errs) add(p Pos, format string, args ...any) {
	if len(e.list) >= MaxErrors {
		e.dropped++
		return
	}
	if p.File == "" {
		p.File = e.file
	}
	e.list = append(e.list, &Error{Pos: p, Msg: fmt.Sprintf(format, args...)})
}

func (e *errs) err() error {
	if len(e.list) == 0 {
		return nil
	}
	if e.dropped > 0 {
		last := e.list[len(e.list)-1].Pos
		return append(e.list, &Error{Pos: last, Msg: fmt.Sprintf("and %d more problems (only the first %d are shown)", e.dropped, MaxErrors)})
	}
	return e.list
}
