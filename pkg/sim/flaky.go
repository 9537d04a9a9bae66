// The flaky command: a board function that fails its first calls and works
// after, for tests of retries.

package sim

import (
	"bytes"
	"strconv"
	"sync"
)

// maxFlaky bounds the names the flaky command remembers, so a client
// cannot grow the board's memory without end.
const maxFlaky = 1024

// flakyCalls counts the calls of each name of the flaky command. It lives
// on the board, not the session: a reboot or a reopened console does not
// make a flaky function fail again, as a marginal part on a real board
// would not; `flaky reset` does.
type flakyCalls struct {
	mu    sync.Mutex
	calls map[string]int
}

// call counts one call of name and reports whether it is among the first
// fails calls, with the call's number.
func (f *flakyCalls) call(name string, fails int) (n int, failed bool, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	if _, known := f.calls[name]; !known && len(f.calls) >= maxFlaky {
		return 0, false, false
	}
	f.calls[name]++
	n = f.calls[name]
	return n, n <= fails, true
}

func (f *flakyCalls) reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	clear(f.calls)
}

// flaky runs `flaky NAME FAILS`: the first FAILS calls of NAME print
// "FAIL NAME (call N)", the calls after them "OK NAME (call N)";
// `flaky reset` forgets every name.
func (s *session) flaky(args []string, out *bytes.Buffer) {
	if len(args) == 1 && args[0] == "reset" {
		s.b.flaky.reset()
		s.println(out, "flaky: reset")
		return
	}
	fails, err := strconv.Atoi(safeArg(args, 1))
	if len(args) != 2 || err != nil || fails < 0 {
		s.println(out, "usage: flaky NAME FAILS | flaky reset")
		return
	}
	n, failed, ok := s.b.flaky.call(args[0], fails)
	switch {
	case !ok:
		s.println(out, "flaky: too many names (at most "+strconv.Itoa(maxFlaky)+"): flaky reset forgets them")
	case failed:
		s.println(out, "FAIL "+args[0]+" (call "+strconv.Itoa(n)+")")
	default:
		s.println(out, "OK "+args[0]+" (call "+strconv.Itoa(n)+")")
	}
}

func safeArg(args []string, i int) string {
	if i < len(args) {
		return args[i]
	}
	return ""
}
