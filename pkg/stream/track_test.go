package stream

import (
	"context"
	"errors"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// pieces cuts text into chunks of n bytes, the last one shorter.
func pieces(text string, n int) []string {
	var out []string
	for len(text) > n {
		out = append(out, text[:n])
		text = text[n:]
	}
	return append(out, text)
}

// A regexp match is found however long it is, up to the Buffer's
// capacity, when it arrives in pieces while Expect waits.
func TestExpectLongRegexpMatch(t *testing.T) {
	tests := []struct {
		name  string
		re    string
		body  int // bytes between BEGIN and FINISH
		chunk int
	}{
		{name: "9000 bytes across lines", re: `BEGIN[^#]*FINISH`, body: 9000, chunk: 1000},
		{name: "200000 bytes across lines", re: `BEGIN[^#]*FINISH`, body: 200000, chunk: 4096},
		{name: "200000 bytes on one line", re: `BEGIN.*FINISH`, body: 200000, chunk: 4093},
		{name: "200000 bytes with groups", re: `BEGIN(?s)(.*)(F)INISH`, body: 200000, chunk: 511},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := strings.Repeat("0123456789abcdef", tt.body/16+1)[:tt.body]
			if strings.Contains(tt.name, "across lines") {
				body = strings.Repeat("12345678901234567890123456789012345678901234567890123456789012\r\n", tt.body/64+1)[:tt.body]
			}
			text := "noise\r\nBEGIN" + body + "FINISH\r\nsim> "
			b := NewBuffer(0)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			type result struct {
				m   Match
				err error
			}
			res := make(chan result, 1)
			go func() {
				m, err := b.Expect(WithSettle(ctx, 0), 0, []Pattern{MustRegexp(tt.re)}, nil)
				res <- result{m, err}
			}()
			waitExpecters(t, b, 1)
			for _, c := range pieces(text, tt.chunk) {
				b.Append(time.Now(), []byte(c))
			}
			r := <-res
			m, err := r.m, r.err
			if err != nil {
				t.Fatalf("Expect: %v", err)
			}
			if wantStart, wantEnd := int64(7), int64(7+5+tt.body+6); m.Start != wantStart || m.End != wantEnd {
				t.Errorf("match [%d, %d), want [%d, %d)", m.Start, m.End, wantStart, wantEnd)
			}
			if len(m.Groups) > 1 && m.Groups[1] != body {
				t.Errorf("group 1 holds %d bytes, want the %d between the markers", len(m.Groups[1]), len(body))
			}
		})
	}
}

// A match that may have begun before the oldest byte kept fails the
// Expect at once, naming the capacity, instead of waiting for its
// deadline.
func TestExpectMatchLongerThanBuffer(t *testing.T) {
	b := NewBuffer(64 << 10)
	b.Append(t0, []byte("x BEGIN"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := b.Expect(ctx, 0, []Pattern{MustRegexp(`BEGIN[^#]*FINISH`)}, nil)
		errc <- err
	}()
	waitExpecters(t, b, 1)
	for range 100 {
		b.Append(t0, []byte(strings.Repeat("y", 1000)))
	}
	err := <-errc
	var be *BufferError
	if !errors.As(err, &be) {
		t.Fatalf("Expect error = %v, want a *BufferError", err)
	}
	if be.Capacity != 64<<10 || be.Start != 2 {
		t.Errorf("BufferError capacity %d start %d, want 65536 and 2", be.Capacity, be.Start)
	}
	want := "wait for /BEGIN[^#]*FINISH/: a match of /BEGIN[^#]*FINISH/ may have begun at offset 2, before the last 64 KiB received, which is all that is kept"
	if err.Error() != want {
		t.Errorf("error = %s\nwant    %s", err, want)
	}
}

// waitExpecters waits until n Expect calls wait on b.
func waitExpecters(t *testing.T, b *Buffer, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		b.mu.RLock()
		got := len(b.expecters)
		b.mu.RUnlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d Expect calls wait, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// A long match costs each byte a bounded number of looks, however the
// bytes are cut: the search does not start over where the match began
// with every chunk.
func TestSearchCostIsLinear(t *testing.T) {
	const size = 1 << 20
	tests := []struct {
		name  string
		re    string
		body  string
		chunk int
	}{
		{name: "one line", re: `BEGIN.*FINISH`, body: strings.Repeat("x", size), chunk: 1024},
		{name: "across lines", re: `BEGIN[^#]*FINISH`, body: strings.Repeat(strings.Repeat("z", 62)+"\r\n", size/64), chunk: 4096},
		{name: "byte by byte", re: `BEGIN(?s:.)*FINISH`, body: strings.Repeat("x", 64<<10), chunk: 1},
		{name: "no literal prefix", re: `\bB\w+N[^#]*FINISH`, body: strings.Repeat("BEGIN ", size/6), chunk: 4096},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := "BEGIN" + tt.body + "FINISH"
			b := NewBuffer(2 * size)
			s := newSearch(0, []Pattern{MustRegexp(tt.re)})
			var f found
			var ok bool
			for _, c := range pieces(text, tt.chunk) {
				b.Append(t0, []byte(c))
				b.mu.RLock()
				var err error
				f, ok, err = s.scanLocked(b, b.end)
				if ok {
					s.finalLocked(b, f, b.end)
				}
				b.mu.RUnlock()
				if err != nil {
					t.Fatal(err)
				}
				if ok {
					break
				}
			}
			if !ok || f.loc[0] != 0 || f.loc[1] != int64(len(text)) {
				t.Fatalf("found %v (%v), want [0 %d]", f.loc, ok, len(text))
			}
			if max := 4 * int64(len(text)); s.scanned > max {
				t.Errorf("examined %d bytes for %d received, want at most %d", s.scanned, len(text), max)
			}
		})
	}
}

// Whatever the chunks, an incremental search reports after each one what
// package regexp finds in everything received so far.
func TestSearchAgreesWithRegexp(t *testing.T) {
	exprs := []string{
		`ab+c`, `(?s)a.*c`, `a[^c]*c`, `\bab`, `b\b`, `\Bb`, `^a`, `(?m)^b+`, `c$`, `(?m)a$`,
		`(a|ab)(c|bcd)`, `a*?b`, `\n[ab]+\n`, `x*`, `(?i)AB`, `é+b`, `[^\x00-\x7f]`, `.\b.`,
		`(?s)b.{3}c`, `(?m)^$`, `a|\n\n`, `\ba\w*\b`,
	}
	alphabet := []string{"a", "b", "c", " ", "\n", "é", "x", "\xe9"}
	r := rand.New(rand.NewPCG(27, 8))
	for _, expr := range exprs {
		re := regexp.MustCompile(expr)
		p := MustRegexp(expr)
		for i := range 400 {
			var sb strings.Builder
			for range r.IntN(40) {
				sb.WriteString(alphabet[r.IntN(len(alphabet))])
			}
			text := sb.String()
			var chunks []string
			for rest := text; len(rest) > 0; {
				n := min(len(rest), 1+r.IntN(6))
				chunks = append(chunks, rest[:n])
				rest = rest[n:]
			}
			b := NewBuffer(0)
			s := newSearch(0, []Pattern{p})
			got := ""
			for _, c := range chunks {
				b.Append(t0, []byte(c))
				b.mu.RLock()
				f, ok, err := s.scanLocked(b, b.end)
				b.mu.RUnlock()
				if err != nil {
					t.Fatal(err)
				}
				want := re.FindStringSubmatchIndex(text[:b.End()])
				var loc []int64
				if ok {
					loc = f.loc
				}
				if !slices.Equal(loc, absolute(want, 0)) {
					t.Fatalf("/%s/ case %d: chunks %q: after %q found %v, package regexp finds %v", expr, i, chunks, got+c, loc, want)
				}
				got += c
				if ok {
					break
				}
			}
		}
	}
}

// A long match held while output keeps coming is not looked at again from
// where it begins for every chunk: the looks cost a bounded number of
// passes over what arrived, and the match is still decided by the byte
// that decides it.
func TestHeldLongMatchCostIsLinear(t *testing.T) {
	b := NewBuffer(4 << 20)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e := &expecter{
		s:   newSearch(0, []Pattern{MustRegexp(`BEGIN[^#]*FINISH`)}),
		ctx: ctx, settle: time.Hour, // only a byte decides it
		want: []Pattern{MustRegexp(`BEGIN[^#]*FINISH`)}, lookFree: heldLookFree,
	}
	decide := func() (done, held bool) {
		b.mu.Lock()
		defer b.mu.Unlock()
		// Append decides a waiting Expect, which then looks again when it
		// wakes: twice per chunk.
		b.decideLocked(e)
		done, held, _ = b.decideLocked(e)
		return done, held
	}
	line := strings.Repeat("z", 62) + "\r\n"
	text := "BEGIN" + strings.Repeat(line, 1024) + "FINISH"
	total := int64(0)
	for _, c := range append(pieces(text, 4096), pieces(strings.Repeat(line, 3<<20/64), 4096)...) {
		b.Append(time.Now(), []byte(c))
		total += int64(len(c))
		if done, held := decide(); done || (!held && b.End() >= int64(len(text))) {
			t.Fatalf("after %d bytes: done %v, held %v, error %v, match %d-%d; want the match held", b.End(), done, held, e.err, e.m.Start, e.m.End)
		}
	}
	b.Append(time.Now(), []byte("FINISH, then #"))
	total += 14
	if done, _ := decide(); !done || e.err != nil {
		t.Fatalf("after the deciding byte: done %v, error %v; want the match", done, e.err)
	}
	if want := total - 8; e.m.Start != 0 || e.m.End != want {
		t.Errorf("match [%d, %d), want [0, %d): up to the last FINISH before #", e.m.Start, e.m.End, want)
	}
	if max := 8 * total; e.s.scanned > max {
		t.Errorf("examined %d bytes for %d received, want at most %d", e.s.scanned, total, max)
	}
}

// Following a held match decides what looking again at every chunk
// decides: the same match, never before it is final.
func TestHeldFollowAgreesWithLooking(t *testing.T) {
	exprs := []string{
		`a[^c]*c`, `(?s)a.*c`, `a\w*`, `ab+`, `(a|ab)(c|bcd)?`, `a.*\b`, `(?m)a.*$`, `b+|ab*c`, `é+`, `[ab]+\n`,
	}
	alphabet := []string{"a", "b", "c", " ", "\n", "é", "\xe9"}
	r := rand.New(rand.NewPCG(27, 9))
	for _, expr := range exprs {
		for i := range 300 {
			var sb strings.Builder
			for range r.IntN(30) {
				sb.WriteString(alphabet[r.IntN(len(alphabet))])
			}
			text := sb.String()
			var chunks []string
			for rest := text; len(rest) > 0; {
				n := min(len(rest), 1+r.IntN(5))
				chunks = append(chunks, rest[:n])
				rest = rest[n:]
			}
			outcome := func(lookFree int64) (int, Match) {
				b := NewBuffer(0)
				e := &expecter{
					s:   newSearch(0, []Pattern{MustRegexp(expr)}),
					ctx: context.Background(), settle: time.Hour,
					want: []Pattern{MustRegexp(expr)}, lookFree: lookFree,
				}
				for j, c := range chunks {
					b.Append(time.Now(), []byte(c))
					b.mu.Lock()
					done, _, _ := b.decideLocked(e)
					b.mu.Unlock()
					if done {
						return j, e.m
					}
				}
				return len(chunks), Match{}
			}
			wantChunk, want := outcome(1 << 40)
			gotChunk, got := outcome(0)
			if gotChunk < wantChunk || got.Start != want.Start || got.End != want.End || !slices.Equal(got.Groups, want.Groups) {
				t.Fatalf("/%s/ case %d: chunks %q: following decides [%d, %d) after chunk %d, looking [%d, %d) after chunk %d",
					expr, i, chunks, got.Start, got.End, gotChunk, want.Start, want.End, wantChunk)
			}
		}
	}
}
