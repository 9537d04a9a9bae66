package repl

import (
	"bytes"
	"testing"
)

// sizedScreen is a screen that records the sizes it is told.
type sizedScreen struct {
	bytes.Buffer
	sizes [][2]int
}

func (s *sizedScreen) ReadLine() (string, error) { return "", nil }
func (s *sizedScreen) SetSize(w, h int) error {
	s.sizes = append(s.sizes, [2]int{w, h})
	return nil
}

// The line editor is told the terminal's size before a line is read, and
// again only when it changed, so a long line wraps where the terminal
// does.
func TestLineEditorFollowsTheTerminal(t *testing.T) {
	w, h := 123, 45
	scr := &sizedScreen{}
	s := &Session{t: scr, opts: Options{TermSize: func() (int, int, bool) { return w, h, true }}}
	s.fitTerminal()
	s.fitTerminal()
	w = 60
	s.fitTerminal()
	want := [][2]int{{123, 45}, {60, 45}}
	if len(scr.sizes) != len(want) || scr.sizes[0] != want[0] || scr.sizes[1] != want[1] {
		t.Errorf("the editor was told %v, want %v", scr.sizes, want)
	}
	none := &sizedScreen{}
	(&Session{t: none, opts: Options{TermSize: func() (int, int, bool) { return 0, 0, false }}}).fitTerminal()
	(&Session{t: none}).fitTerminal()
	if len(none.sizes) != 0 {
		t.Errorf("without a size the editor was told %v", none.sizes)
	}
}
