package sim

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// bootConsoles starts a board with n consoles and a client on each, past
// their banners.
func bootConsoles(t *testing.T, opts Options, n int) (*Board, []*client) {
	t.Helper()
	opts.Consoles = n
	b := startBoard(t, opts)
	var cs []*client
	for i := range n {
		c := dial(t, b.ConsolePath(i))
		c.expect(bannerFor(opts))
		cs = append(cs, c)
	}
	return b, cs
}

func TestConsolesHaveTheirOwnPtys(t *testing.T) {
	b, _ := bootConsoles(t, Options{}, 3)
	paths := []string{b.ConsolePath(0), b.ConsolePath(1), b.ConsolePath(2)}
	for i, p := range paths {
		if p == "" || slices.Index(paths, p) != i {
			t.Fatalf("console paths %v, want three different ptys", paths)
		}
	}
	if b.ConsolePath(0) != b.SerialPath() || b.ConsolePath(3) != "" || b.ConsolePath(-1) != "" {
		t.Errorf("ConsolePath: 0 = %q (SerialPath %q), 3 = %q, -1 = %q", b.ConsolePath(0), b.SerialPath(), b.ConsolePath(3), b.ConsolePath(-1))
	}
	if b.Consoles() != 3 {
		t.Errorf("Consoles() = %d, want 3", b.Consoles())
	}
}

func TestTxArrivesOnTheOtherConsoles(t *testing.T) {
	b, cs := bootConsoles(t, Options{}, 3)
	cs[0].send("tx hello there\r")
	cs[0].expect("tx: 11 bytes\r\nsim> ")
	cs[1].expect("rx hello there\r\nsim> ")
	cs[2].expect("rx hello there\r\nsim> ")

	// The other way, and the shells go on answering.
	cs[1].send("tx pong\r")
	cs[1].expect("tx: 4 bytes\r\nsim> ")
	cs[0].expect("rx pong\r\nsim> ")
	cs[2].expect("rx pong\r\nsim> ")
	cs[0].send("version\r")
	cs[0].expect(DefaultVersion + "\r\nsim> ")

	var consoles []int
	for _, l := range b.Received() {
		consoles = append(consoles, l.Console)
	}
	if want := []int{0, 1, 0}; !slices.Equal(consoles, want) {
		t.Errorf("Received() came from consoles %v, want %v", consoles, want)
	}
}

func TestTxUsageAndOneConsole(t *testing.T) {
	_, c := boot(t, Options{})
	c.send("tx\r")
	c.expect("usage: tx TEXT\r\nsim> ")
	// Nobody listens on a board with one console; the radio still sends.
	c.send("tx lonely\r")
	c.expect("tx: 6 bytes\r\nsim> ")
}

func TestHelpListsTxAndHang(t *testing.T) {
	_, c := boot(t, Options{})
	c.send("help\r")
	lines := strings.Split(strings.TrimSuffix(c.until("sim> "), "\r\nsim> "), "\r\n")
	var names []string
	for _, l := range lines {
		names = append(names, strings.Fields(l)[0])
	}
	if !slices.Contains(names, "tx") || !slices.Contains(names, "hang") || names[len(names)-1] != "CMD;" {
		t.Errorf("help lists %v, want tx and hang, and CMD; CMD last", names)
	}
}

// waitReceived waits until the board logged line on console, the event
// that says the board had it: it must not answer then.
func waitReceived(t *testing.T, b *Board, console int, line string) {
	t.Helper()
	deadline := time.Now().Add(ioTimeout)
	for !slices.ContainsFunc(b.Received(), func(l RxLine) bool { return l.Line == line && l.Console == console }) {
		if time.Now().After(deadline) {
			t.Fatalf("the board never received %q on console %d", line, console)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A hung board reads its input but answers nothing, not even Ctrl-C, until
// a reset of its memory map (as a debugger's reset does): then it boots,
// and the banner is the next thing the client reads.
func TestHangUntilReset(t *testing.T) {
	opts := Options{Echo: true}
	b, c := boot(t, opts)
	c.send("echo bye; hang; echo never\r")
	c.expect("echo bye; hang; echo never\r\nbye\r\nhung\r\n")
	if !b.Hung() {
		t.Fatal("Hung() = false after hang")
	}
	c.send("version\r\x03status\r")
	waitReceived(t, b, 0, "status")
	b.Memory().Reset()
	c.expect(bannerFor(opts))
	if b.Hung() {
		t.Error("Hung() = true after a reset")
	}
	c.send("version\r")
	c.expect("version\r\n" + DefaultVersion + "\r\nsim> ")
}

// A hang stops every console, and the radio with it; a power cycle
// (Replug) ends it.
func TestHangStopsEveryConsoleUntilPowerCycle(t *testing.T) {
	b, cs := bootConsoles(t, Options{}, 2)
	cs[0].send("hang\r")
	cs[0].expect("hung\r\n")
	cs[1].send("tx anyone\r")
	waitReceived(t, b, 1, "tx anyone")
	if err := b.Replug(); err != nil {
		t.Fatalf("Replug: %v", err)
	}
	if b.Hung() {
		t.Error("Hung() = true after a power cycle")
	}
	for i := range 2 {
		c := dial(t, b.ConsolePath(i))
		c.expect(bannerFor(Options{}))
		c.send("version\r")
		c.expect(DefaultVersion + "\r\nsim> ")
	}
}

// A reset of a board that is not hung prints nothing on its consoles.
func TestResetOfARunningBoardIsQuiet(t *testing.T) {
	b, c := boot(t, Options{})
	b.Memory().Reset()
	c.send("version\r")
	c.expect(DefaultVersion + "\r\nsim> ")
}

func TestOnReset(t *testing.T) {
	m := NewMemory()
	n := 0
	remove := m.OnReset(func() { n++ })
	m.Reset()
	remove()
	m.Reset()
	if n != 1 {
		t.Errorf("OnReset hook ran %d times, want 1", n)
	}
}
