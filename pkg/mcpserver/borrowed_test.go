package mcpserver

import (
	"context"
	"testing"
)

// catchUpConsole is a Console whose CatchUp says how often it was asked.
type catchUpConsole struct {
	Console
	asked int
}

func (c *catchUpConsole) CatchUp(context.Context) (int64, error) {
	c.asked++
	return 42, nil
}

type cursorConsole struct{ Console }

func (cursorConsole) Cursor() int64 { return 7 }

// A connection a sequence borrows from the client's session takes in what
// its port holds before a send, as a console the run opened does: a
// reply never begins before bytes that were on their way.
func TestBorrowedCatchesUp(t *testing.T) {
	under := &catchUpConsole{}
	got, err := borrowed{Console: under}.CatchUp(context.Background())
	if err != nil || got != 42 || under.asked != 1 {
		t.Errorf("CatchUp = %d, %v after %d asks; want the console's own, asked once", got, err, under.asked)
	}
	got, err = borrowed{Console: cursorConsole{}}.CatchUp(context.Background())
	if err != nil || got != 7 {
		t.Errorf("without the ability: CatchUp = %d, %v; want the cursor", got, err)
	}
}
