package stream

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"
)

// commitChunks appends chunks one by one and, after each, searches as a
// waiting Expect does and commits the match only when it is final. It
// returns the committed match, or ok false when none was final after the
// last chunk.
func commitChunks(b *Buffer, chunks []string, pats []Pattern) (groups []string, loc []int64, ok bool) {
	s := newSearch(b.Start(), pats)
	for _, c := range chunks {
		b.Append(t0, []byte(c))
		b.mu.RLock()
		f, found, _ := s.scanLocked(b, b.end)
		if found && s.finalLocked(b, f, b.end) {
			groups, loc = b.groupsLocked(f), f.loc
			b.mu.RUnlock()
			return groups, loc, true
		}
		b.mu.RUnlock()
	}
	return nil, nil, false
}

// finalIn reports whether the match of p in text, the whole of what
// arrived, is final.
func finalIn(p Pattern, text string) (matched, final bool) {
	b := NewBuffer(0)
	b.Append(t0, []byte(text))
	s := newSearch(0, []Pattern{p})
	b.mu.RLock()
	defer b.mu.RUnlock()
	f, ok, _ := s.scanLocked(b, b.end)
	if !ok {
		return false, false
	}
	return true, s.finalLocked(b, f, b.end)
}

func TestFinal(t *testing.T) {
	tests := []struct {
		re, text string
		final    bool
	}{
		{`adc=(?P<adc>\d+)`, "adc=40", false},
		{`adc=(?P<adc>\d+)`, "adc=4095\r\n", true},
		{`adc=(?P<adc>\d+)`, "adc=4095 ", true},
		{`\d+`, "x12", false},
		{`\d+`, "12x", true},
		{`\d{2}`, "40", true},
		{`\d{2}`, "4095", true},
		{`\d{1,4}`, "40", false},
		{`\d{1,4}`, "409", false},
		{`\d{1,4}`, "4095", true},
		{`a|ab`, "a", true},
		{`ab|a`, "a", false},
		{`ab|a`, "ax", true},
		{`x*`, "", false},
		{`x*`, "xx", false},
		{`x*`, "xxy", true},
		{`x*`, "y", true},
		{`\d+?`, "40", true},
		{`(\d+?)\r`, "40\r", true},
		{`ok\B`, "okk", true},
		{`v(\d+)\.(\d+)\.(\d+)`, "v1.22.3", false},
		{`(?P<v>on|off)`, "off", true},
		{`(?s).*`, "abc", false},
		{`.*`, "abc\n", true},
		{`ok$`, "ok", true},
		{`(?m)ok$`, "ok", true},
		{`(nucleo|stm32)> $`, "nucleo> ", true},
		{`\d+$`, "40", false},
		{`ok\z`, "ok", true},
		{`(?m)ok$`, "ok\n", true},
		{`ok\b`, "ok", false},
		{`ok\b`, "ok ", true},
		{`\bok`, "ok", true},
		{`^ok`, "ok", true},
		{`ok`, "ok", true},
		{`(?i)ready>`, "READY>", true},
		{`v(\d+)\.(\d+)\.(\d+)`, "v1.2.3", false},
		{`v(\d+)\.(\d+)\.(\d+)`, "v1.2.3\n", true},
		{`size\s*=\s*(0x[0-9a-f]+)`, "size = 0x080", false},
		{`size\s*=\s*(0x[0-9a-f]+)`, "size = 0x08000000\r\n", true},
		{`abcd|c`, "abc", false},
		{`abcd|c`, "abcx", true},
		{`(?P<v>on|off)`, "on", true},
		{`(?P<v>o|on)`, "o", true},
		{`a(bc)?`, "ab", false},
		{`a(bc)?`, "abd", true},
		{`a(bc)?`, "a", false},
		{`é+`, "é\xc3", false},
		{`é+`, "éx", true},
		{`.`, "\xc3", false},
		{`.`, "\xff", true},
		{`[^x]`, "a\xe2\x82", true},
		{`temp=(-?\d+(\.\d+)?)C`, "temp=23.4C", true},
		{`temp=(-?\d+(\.\d+)?)`, "temp=23", false},
		{`temp=(-?\d+(\.\d+)?)`, "temp=23.", false},
		{`temp=(-?\d+(\.\d+)?)`, "temp=23.4;", true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s on %q", tt.re, tt.text), func(t *testing.T) {
			matched, final := finalIn(MustRegexp(tt.re), tt.text)
			if !matched {
				t.Fatalf("no match")
			}
			if final != tt.final {
				t.Errorf("final = %v, want %v", final, tt.final)
			}
		})
	}
}

// Literals are final however they end.
func TestFinalLiteral(t *testing.T) {
	for _, text := range []string{"ready>", "ready> ", "xready>"} {
		if matched, final := finalIn(Literal("ready>"), text); !matched || !final {
			t.Errorf("%q: matched %v, final %v; want both", text, matched, final)
		}
	}
}

// A match of one pattern waits for another pattern's match that would
// start earlier and is still arriving.
func TestFinalAcrossPatterns(t *testing.T) {
	pats := []Pattern{Literal("OK"), MustRegexp(`ERR.*!`)}
	if _, loc, ok := commitChunks(NewBuffer(0), []string{"ERR 4 OK"}, pats); ok {
		t.Errorf("committed %v while ERR... could still end with !", loc)
	}
	if g, _, ok := commitChunks(NewBuffer(0), []string{"ERR 4 OK", "\n"}, pats); !ok || g[0] != "OK" {
		t.Errorf("committed %q, want OK once the line ended", g)
	}
	if g, _, ok := commitChunks(NewBuffer(0), []string{"ERR 4 OK", "!\n"}, pats); !ok || g[0] != "ERR 4 OK!" {
		t.Errorf("committed %q, want the earlier ERR match", g)
	}
}

// Final means final: no continuation of the text changes a final match.
// The texts are every prefix of sample lines, the continuations every
// string of up to two bytes over an alphabet that covers each class the
// patterns tell apart.
func TestFinalIsSound(t *testing.T) {
	pats := []string{
		`adc=(?P<adc>\d+)`, `\d+`, `\d{1,4}`, `a|ab`, `ab|a`, `x*`, `\d+?`, `(?s).*`, `.*`,
		`ok\b`, `\bok\B`, `v(\d+)\.(\d+)\.(\d+)`, `size\s*=\s*(0x[0-9a-f]+)`,
		`abcd|c`, `a(bc)?`, `(a+)(b*)`, `(?i)OK|ok\d`, `[a-c]+?d`, `(x|xy|xyz)\b`, `é+`,
	}
	samples := []string{
		"adc=4095\r\n", "v1.2.3\n", "size = 0x08000000\r\n", "abcd ab a", "xxyxz", "ok okk ok1\n",
		"aabbb", "é\xc3\xa9x", "OKok7",
	}
	alphabet := []string{"", "a", "b", "c", "d", "x", "y", "z", "0", "7", ".", " ", "\n", "\r", "=", "k", "o", "\xc3", "\xa9", "\xff"}
	var conts []string
	for _, c1 := range alphabet {
		for _, c2 := range alphabet {
			conts = append(conts, c1+c2)
		}
	}
	for _, expr := range pats {
		p := MustRegexp(expr)
		for _, sample := range samples {
			for n := 0; n <= len(sample); n++ {
				text := sample[:n]
				matched, final := finalIn(p, text)
				if !matched || !final {
					continue
				}
				want := p.Find([]byte(text))
				for _, c := range conts {
					got := p.Find([]byte(text + c))
					if !slices.Equal(got, want) {
						t.Errorf("%s on %q: called final at %v, but with %q following it is %v", expr, text, want, c, got)
						break
					}
				}
			}
		}
	}
}

// wholeMatch is what a pattern gives on the whole text followed by a
// delimiter that none of the test patterns consume.
func wholeMatch(p Pattern, text string) []string {
	m, ok := Find([]byte(text+"\x00"), []Pattern{p})
	if !ok {
		return nil
	}
	return m.Groups
}

// The examples of docs/sequences.md, cut into two or three chunks at
// every byte position: the groups committed are those of the whole text.
func TestExpectChunkSplits(t *testing.T) {
	tests := []struct {
		re, text string
		want     []string
	}{
		{`v(\d+)\.(\d+)\.(\d+)`, "> version\r\nfw v12.40.305\r\n> ", []string{"v12.40.305", "12", "40", "305"}},
		{`adc=(?P<adc>\d+)`, "adc read 3\r\nadc=4095\r\n> ", []string{"adc=4095", "4095"}},
		{`size\s*=\s*(0x[0-9a-f]+)`, "flashstart = 0x0\r\nflashsize  = 0x08000000\r\n", []string{"size  = 0x08000000", "0x08000000"}},
		{`temp=(-?\d+(?:\.\d+)?)C?`, "temp=-23.45C\n", []string{"temp=-23.45C", "-23.45"}},
	}
	for _, tt := range tests {
		t.Run(tt.re, func(t *testing.T) {
			p := MustRegexp(tt.re)
			if got := wholeMatch(p, tt.text); !slices.Equal(got, tt.want) {
				t.Fatalf("whole text gives %q, want %q", got, tt.want)
			}
			check := func(chunks []string) {
				t.Helper()
				got, _, ok := commitChunks(NewBuffer(0), chunks, []Pattern{p})
				if !ok || !slices.Equal(got, tt.want) {
					t.Errorf("chunks %q: committed %q (ok %v), want %q", chunks, got, ok, tt.want)
				}
			}
			n := len(tt.text)
			for i := 0; i <= n; i++ {
				check([]string{tt.text[:i], tt.text[i:]})
				for j := i; j <= n; j++ {
					check([]string{tt.text[:i], tt.text[i:j], tt.text[j:]})
				}
			}
		})
	}
}

// The same property over random texts and random cuts.
func TestExpectChunkSplitsRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	pats := []string{`adc=(\d+)`, `(\d+)\.(\d+)`, `a+b*`, `(ab|a)(c*)`, `x\b`, `(?m)^v\d+$`, `[0-9a-f]{2,4}`, `(a|ab)(c|bcd)`}
	alphabet := []byte("adc=0129.abvx f\n")
	for i := range 3000 {
		p := MustRegexp(pats[i%len(pats)])
		text := make([]byte, r.IntN(24))
		for j := range text {
			text[j] = alphabet[r.IntN(len(alphabet))]
		}
		want := wholeMatch(p, string(text))
		var chunks []string
		for rest := string(text); len(rest) > 0; {
			n := min(len(rest), 1+r.IntN(6))
			chunks = append(chunks, rest[:n])
			rest = rest[n:]
		}
		chunks = append(chunks, "\x00")
		got, _, ok := commitChunks(NewBuffer(0), chunks, []Pattern{p})
		if want == nil {
			if ok {
				t.Fatalf("%s: chunks %q: committed %q, whole text has no match", p, chunks, got)
			}
			continue
		}
		if !ok || !slices.Equal(got, want) {
			t.Fatalf("%s: chunks %q: committed %q (ok %v), want %q", p, chunks, got, ok, want)
		}
	}
}

// fakeClock is a clock whose time moves only when the test says so. Each
// timer Expect starts is announced on timers.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers chan fakeTimer
	funcs  chan fakeFunc
}

type fakeFunc struct {
	d time.Duration
	f func()
}

type fakeTimer struct {
	d  time.Duration
	ch chan time.Time
}

func newFakeClock(now time.Time) *fakeClock {
	return &fakeClock{now: now, timers: make(chan fakeTimer, 16), funcs: make(chan fakeFunc, 16)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Timer(d time.Duration) (<-chan time.Time, func() bool) {
	ch := make(chan time.Time, 1)
	c.timers <- fakeTimer{d, ch}
	return ch, func() bool { return true }
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.funcs <- fakeFunc{d, f}
	return func() bool { return true }
}

// fire moves the clock d past the time of the timer's start and fires it.
func (c *fakeClock) fire(ft fakeTimer) {
	c.mu.Lock()
	c.now = c.now.Add(ft.d)
	now := c.now
	c.mu.Unlock()
	ft.ch <- now
}

type expectResult struct {
	m   Match
	err error
}

func expectAsync(ctx context.Context, b *Buffer, pats []Pattern) chan expectResult {
	done := make(chan expectResult, 1)
	go func() {
		m, err := b.Expect(ctx, 0, pats, nil)
		done <- expectResult{m, err}
	}()
	return done
}

// A byte the pattern cannot consume ends the hold: 4095 is saved, not 40.
func TestExpectHoldsUntilDecidingByte(t *testing.T) {
	clk := newFakeClock(t0)
	b := NewBuffer(0)
	b.clock = clk
	b.Append(t0, []byte("adc=40"))
	done := expectAsync(context.Background(), b, []Pattern{MustRegexp(`adc=(?P<adc>\d+)`)})
	ft := <-clk.timers // Expect holds "adc=40"
	if ft.d != DefaultSettle {
		t.Errorf("held for %v, want the default settle time %v", ft.d, DefaultSettle)
	}
	b.Append(t0, []byte("9"))
	<-clk.timers // still held: "adc=409" could grow too
	b.Append(t0, []byte("5\r\n"))
	r := <-done
	if r.err != nil || r.m.Groups[1] != "4095" || r.m.End != int64(len("adc=4095")) {
		t.Fatalf("Expect = %+v, %v; want adc 4095", r.m, r.err)
	}
}

// A quiet line commits the match held once the settle time has passed
// since the last byte.
func TestExpectSettles(t *testing.T) {
	clk := newFakeClock(t0)
	b := NewBuffer(0)
	b.clock = clk
	b.Append(t0, []byte("adc=40"))
	ctx := WithSettle(context.Background(), 300*time.Millisecond)
	done := expectAsync(ctx, b, []Pattern{MustRegexp(`adc=(?P<adc>\d+)`)})
	ft := <-clk.timers
	if ft.d != 300*time.Millisecond {
		t.Errorf("held for %v, want the settle time given, 300ms", ft.d)
	}
	select {
	case r := <-done:
		t.Fatalf("Expect returned %+v, %v before the settle time passed", r.m, r.err)
	default:
	}
	clk.fire(ft)
	r := <-done
	if r.err != nil || r.m.Groups[1] != "40" {
		t.Fatalf("Expect = %+v, %v; want adc 40 after settling", r.m, r.err)
	}
}

// The settle time counts from the last byte: bytes that arrived long ago
// are settled at once.
func TestExpectSettledAlready(t *testing.T) {
	clk := newFakeClock(t0.Add(time.Hour))
	b := NewBuffer(0)
	b.clock = clk
	b.Append(t0, []byte("adc=40"))
	m, err := b.Expect(context.Background(), 0, []Pattern{MustRegexp(`adc=(\d+)`)}, nil)
	if err != nil || m.Groups[1] != "40" {
		t.Fatalf("Expect = %+v, %v", m, err)
	}
}

// A deadline, the Buffer's error or a settle time of 0 commit a held
// match; a cancellation does not.
func TestExpectHoldEnds(t *testing.T) {
	re := MustRegexp(`adc=(\d+)`)
	newBuf := func() *Buffer {
		b := NewBuffer(0)
		b.clock = newFakeClock(t0)
		b.Append(t0, []byte("adc=40"))
		return b
	}
	past, cancel := context.WithDeadline(context.Background(), t0)
	defer cancel()
	if m, err := newBuf().Expect(past, 0, []Pattern{re}, nil); err != nil || m.Groups[1] != "40" {
		t.Errorf("at the deadline: %+v, %v; want the held match", m, err)
	}
	if m, err := newBuf().Expect(WithSettle(context.Background(), 0), 0, []Pattern{re}, nil); err != nil || m.Groups[1] != "40" {
		t.Errorf("settle 0: %+v, %v; want the match at once", m, err)
	}
	b := newBuf()
	b.SetErr(fmt.Errorf("device gone"))
	if m, err := b.Expect(context.Background(), 0, []Pattern{re}, nil); err != nil || m.Groups[1] != "40" {
		t.Errorf("with the error set: %+v, %v; want the match", m, err)
	}
	cctx, ccancel := context.WithCancel(context.Background())
	ccancel()
	if m, err := newBuf().Expect(cctx, 0, []Pattern{re}, nil); err == nil {
		t.Errorf("cancelled: %+v, want an error", m)
	}
}

// A literal and a regexp that a delimiter ends never start a timer.
func TestExpectNoHold(t *testing.T) {
	for _, p := range []Pattern{Literal("sim> "), MustRegexp(`ping-(\d+)\r\n`), MustRegexp(`adc=(\d+)`)} {
		clk := newFakeClock(t0)
		b := NewBuffer(0)
		b.clock = clk
		b.Append(t0, []byte("ping-12\r\nsim> adc=7\r"))
		if _, err := b.Expect(context.Background(), 0, []Pattern{p}, nil); err != nil {
			t.Errorf("%s: %v", p, err)
		}
		if len(clk.timers) != 0 {
			t.Errorf("%s: Expect started a timer", p)
		}
	}
}

func TestWithSettle(t *testing.T) {
	if got := settleOf(context.Background()); got != DefaultSettle {
		t.Errorf("default = %v", got)
	}
	if got := settleOf(WithSettle(context.Background(), -time.Second)); got != 0 {
		t.Errorf("negative = %v, want 0", got)
	}
	if got := settleOf(WithSettle(context.Background(), 5*time.Millisecond)); got != 5*time.Millisecond {
		t.Errorf("5ms = %v", got)
	}
}

// Capture's until holds a match as Expect does.
func TestCaptureUntilHolds(t *testing.T) {
	clk := newFakeClock(t0)
	b := NewBuffer(0)
	b.clock = clk
	b.Append(t0, []byte("adc=40"))
	done := make(chan Capture, 1)
	go func() {
		c, err := b.Capture(context.Background(), 0, CaptureOptions{Until: []Pattern{MustRegexp(`adc=(\d+)`)}})
		if err != nil {
			t.Error(err)
		}
		done <- c
	}()
	<-clk.timers // the capture holds "adc=40"
	b.Append(t0, []byte("95\r\n"))
	c := <-done
	if c.Reason != ReasonUntil || c.Until.Groups[1] != "4095" || string(c.Data) != "adc=4095" {
		t.Fatalf("Capture = %q (%s), until %+v; want adc=4095", c.Data, c.Reason, c.Until)
	}

	// A quiet line commits it after the settle time.
	clk = newFakeClock(t0)
	b = NewBuffer(0)
	b.clock = clk
	b.Append(t0, []byte("adc=40"))
	go func() {
		c, _ := b.Capture(context.Background(), 0, CaptureOptions{Until: []Pattern{MustRegexp(`adc=(\d+)`)}})
		done <- c
	}()
	clk.fire(<-clk.timers)
	if c := <-done; c.Reason != ReasonUntil || c.Until.Groups[1] != "40" {
		t.Fatalf("Capture = %q (%s); want adc=40 after settling", c.Data, c.Reason)
	}
}

// A sequence-wide fail_on (Watch) holds an occurrence that more bytes could
// change: "fail" may be the start of "failed", which \bfail\b does not
// match.
func TestWatchHolds(t *testing.T) {
	clk := newFakeClock(t0)
	b := NewBuffer(0)
	b.clock = clk
	var hits []Hit
	b.Watch([]Pattern{MustRegexp(`\bfail\b`), MustRegexp(`panic: (\w+)`)}, func(h Hit) { hits = append(hits, h) })
	b.Append(t0, []byte("test fail"))
	if len(hits) != 0 {
		t.Fatalf("hits %+v while fail could become failed", hits)
	}
	ff := <-clk.funcs // the settle timer
	b.Append(t0, []byte("ed\npanic: Hard"))
	if len(hits) != 0 {
		t.Fatalf("hits %+v; failed is no fail, and Hard may grow", hits)
	}
	b.Append(t0, []byte("Fault\n"))
	if len(hits) != 1 || hits[0].Line != "panic: HardFault" {
		t.Fatalf("hits %+v, want the whole panic line", hits)
	}
	ff.f() // a stale timer reports nothing
	if len(hits) != 1 {
		t.Fatalf("hits %+v after a stale timer", hits)
	}

	// A quiet line reports what is held once the settle time has passed.
	b.Append(t0, []byte("it did fail"))
	ff = <-clk.funcs
	ff.f() // too early: the clock has not moved
	if len(hits) != 1 {
		t.Fatalf("hits %+v before the settle time", hits)
	}
	ff = <-clk.funcs // armed again for the rest
	clk.mu.Lock()
	clk.now = clk.now.Add(DefaultSettle)
	clk.mu.Unlock()
	ff.f()
	if len(hits) != 2 || hits[1].Line != "it did fail" {
		t.Fatalf("hits %+v, want it did fail after settling", hits)
	}
}

// A step's fail_on match is held like the expected one, so its excerpt is
// not cut short.
func TestExpectFailOnHolds(t *testing.T) {
	clk := newFakeClock(t0)
	b := NewBuffer(0)
	b.clock = clk
	b.Append(t0, []byte("panic: Hard"))
	done := make(chan error, 1)
	go func() {
		_, err := b.Expect(context.Background(), 0, []Pattern{Literal("never")}, []Pattern{MustRegexp(`panic: \w+`)})
		done <- err
	}()
	<-clk.timers
	b.Append(t0, []byte("Fault\r\n"))
	var fe *FailOnError
	if err := <-done; !errors.As(err, &fe) || fe.Line != "panic: HardFault" {
		t.Fatalf("Expect = %v, want the fail_on error with the whole line", err)
	}
}

func TestFindCut(t *testing.T) {
	tests := []struct {
		text    string
		ok, cut bool
	}{
		{"size = 0x0800", false, true},
		{"size = 0x0800\n", true, false},
		{"nothing here", false, false},
	}
	for _, tt := range tests {
		m, ok, cut := FindCut([]byte(tt.text), []Pattern{Literal("nope"), MustRegexp(`size\s*=\s*(0x[0-9a-f]+)`)})
		if ok != tt.ok || cut != tt.cut {
			t.Errorf("%q: ok %v cut %v (%+v), want ok %v cut %v", tt.text, ok, cut, m, tt.ok, tt.cut)
		}
		if ok && (m.Index != 1 || m.Groups[1] != "0x0800") {
			t.Errorf("%q: %+v", tt.text, m)
		}
	}
}
