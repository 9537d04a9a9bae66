package stream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// scanChunks appends chunks one by one and searches after each, as a
// waiting Expect does, so that matches straddling chunks are exercised
// deterministically. It returns the match and the chunk that completed it.
func scanChunks(b *Buffer, from int64, chunks []string, lists ...[]Pattern) (f found, ok bool, chunk int) {
	f, ok, chunk, _ = scanChunksErr(b, from, chunks, lists...)
	return f, ok, chunk
}

// scanChunksErr is scanChunks that also returns the search's error, which
// ends it, and how many bytes the search examined.
func scanChunksErr(b *Buffer, from int64, chunks []string, lists ...[]Pattern) (f found, ok bool, chunk int, err error) {
	s := newSearch(max(from, b.Start()), lists...)
	for i, c := range chunks {
		b.Append(t0, []byte(c))
		b.mu.RLock()
		f, ok, err = s.scanLocked(b, b.end)
		b.mu.RUnlock()
		if ok || err != nil {
			return f, ok, i, err
		}
	}
	return found{}, false, -1, nil
}

func TestSearchAcrossChunks(t *testing.T) {
	tests := []struct {
		name      string
		chunks    []string
		pats      []Pattern
		wantK     int // -1: no match
		wantLoc   []int64
		wantChunk int
	}{
		{name: "literal in one chunk", chunks: []string{"boot ok\n"}, pats: []Pattern{Literal("ok")}, wantLoc: []int64{5, 7}},
		{name: "literal straddles two chunks", chunks: []string{"fw ver", "sion 1.0\n"}, pats: []Pattern{Literal("version")}, wantLoc: []int64{3, 10}, wantChunk: 1},
		{name: "literal byte by byte", chunks: strings.Split("xxHardFault", ""), pats: []Pattern{Literal("HardFault")}, wantLoc: []int64{2, 11}, wantChunk: 10},
		{name: "literal over three chunks", chunks: []string{"Gu", "ru Medi", "tation"}, pats: []Pattern{Literal("Guru Meditation")}, wantLoc: []int64{0, 15}, wantChunk: 2},
		{name: "literal absent", chunks: []string{"abc", "def"}, pats: []Pattern{Literal("cd ")}, wantK: -1},
		{name: "regexp straddles", chunks: []string{"temp=2", "3.5C\n"}, pats: []Pattern{MustRegexp(`temp=(\d+\.\d)C`)}, wantLoc: []int64{0, 10, 5, 9}, wantChunk: 1},
		{name: "regexp over lines", chunks: []string{"begin\nmid", "dle\nend"}, pats: []Pattern{MustRegexp(`(?s)begin.*end`)}, wantLoc: []int64{0, 16}, wantChunk: 1},
		{name: "line regexp after newline", chunks: []string{"aaa\nbb", "b=1\n"}, pats: []Pattern{MustRegexp(`b+=\d`)}, wantLoc: []int64{4, 9}, wantChunk: 1},
		{
			name:   "regexp in two long pieces",
			chunks: []string{"<" + strings.Repeat("x", 40), strings.Repeat("x", 40) + ">"},
			pats:   []Pattern{MustRegexp(`(?s)<x+>`)}, wantLoc: []int64{0, 82}, wantChunk: 1,
		},
		{
			name:   "regexp resumed with the rune before as context",
			chunks: []string{"a b", "c\nbcd"},
			pats:   []Pattern{MustRegexp(`\bbc\w`)}, wantLoc: []int64{5, 8}, wantChunk: 1,
		},
		{
			name:   "regexp at a line start after a resume",
			chunks: []string{"x\nab", "c"},
			pats:   []Pattern{MustRegexp(`(?m)^abc|^x\nz`)}, wantLoc: []int64{2, 5}, wantChunk: 1,
		},
		{
			name:   "text start only where the search began",
			chunks: []string{"xy", "z"},
			pats:   []Pattern{MustRegexp(`^yz|^xy`)}, wantLoc: []int64{0, 2}, wantChunk: 0,
		},
		{
			name:   "no text start after a resume",
			chunks: []string{"q", "yz"},
			pats:   []Pattern{MustRegexp(`^yz`)}, wantK: -1,
		},
		{name: "earliest wins", chunks: []string{"warn then error"}, pats: []Pattern{Literal("error"), Literal("warn")}, wantK: 1, wantLoc: []int64{0, 4}},
		{name: "tie goes to lowest index", chunks: []string{"error: x"}, pats: []Pattern{MustRegexp(`err\w*`), Literal("error")}, wantK: 0, wantLoc: []int64{0, 5}},
		{name: "earlier complete match wins over later chunk", chunks: []string{"abc", "def"}, pats: []Pattern{Literal("cde"), Literal("b")}, wantK: 1, wantLoc: []int64{1, 2}},
		{name: "zero pattern never matches", chunks: []string{"abc"}, pats: []Pattern{{}, Literal("c")}, wantK: 1, wantLoc: []int64{2, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBuffer(0)
			f, ok, chunk := scanChunks(b, 0, tt.chunks, tt.pats)
			if tt.wantK < 0 {
				if ok {
					t.Fatalf("found pattern %d at %v, want no match", f.k, f.loc)
				}
				return
			}
			if !ok {
				t.Fatalf("no match, want pattern %d at %v", tt.wantK, tt.wantLoc)
			}
			if f.k != tt.wantK || !slices.Equal(f.loc, tt.wantLoc) || chunk != tt.wantChunk {
				t.Errorf("found pattern %d at %v after chunk %d, want pattern %d at %v after chunk %d", f.k, f.loc, chunk, tt.wantK, tt.wantLoc, tt.wantChunk)
			}
		})
	}
}

// An incremental search over any chunking finds what a search of the whole
// text finds.
func TestSearchChunkingInvariance(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	pats := []Pattern{
		Literal("abcab"),
		Literal("\r\nOK\r\n"),
		MustRegexp(`v(\d)\.(\d);`),
		MustRegexp(`(?s)S[ab\n]{3}E`),
	}
	alphabet := []byte("abcv0123.;\r\nOKSE")
	for i := range 2000 {
		text := make([]byte, r.IntN(60))
		for j := range text {
			text[j] = alphabet[r.IntN(len(alphabet))]
		}
		for k, p := range pats {
			want := p.Find(text)
			var chunks []string
			for rest := string(text); len(rest) > 0; {
				n := min(len(rest), 1+r.IntN(7))
				chunks = append(chunks, rest[:n])
				rest = rest[n:]
			}
			b := NewBuffer(0)
			f, ok, _ := scanChunks(b, 0, chunks, []Pattern{p})
			if want == nil {
				if ok {
					t.Fatalf("case %d pattern %d: chunks %q: found %v, whole text has no match", i, k, chunks, f.loc)
				}
				continue
			}
			if !ok {
				t.Fatalf("case %d pattern %d: chunks %q: no match, whole text matches at %v", i, k, chunks, want)
			}
			// A streaming search reports the leftmost match that is complete
			// in what arrived; for these delimited patterns it is the same.
			if f.loc[0] != int64(want[0]) || f.loc[1] != int64(want[1]) {
				t.Fatalf("case %d pattern %d: chunks %q: found %v, want %v", i, k, chunks, f.loc, want)
			}
		}
	}
}

// A waiting search must not rescan what it already searched: after a miss
// a literal resumes by its length minus one before the end, a regexp where
// the oldest match still possible began.
func TestSearchResumePoint(t *testing.T) {
	lines := strings.Repeat(strings.Repeat("x", 99)+"\n", 10) // 1000 bytes
	tests := []struct {
		name string
		pat  Pattern
		tail string
		want int64 // resume offset after lines + tail
	}{
		{name: "literal overlaps its length minus one", pat: Literal("abcd"), tail: "yy", want: 1002 - 3},
		{name: "regexp with nothing in progress resumes at the end", pat: MustRegexp(`a\d+b`), tail: "yy", want: 1002},
		{name: "multi-line regexp resumes where it may begin", pat: MustRegexp(`a\s+b`), tail: "ya \n\n ", want: 1001},
		{name: "line regexp drops what a newline ended", pat: MustRegexp(`a\d+b`), tail: "a12\na3", want: 1004},
		{name: "regexp keeps the oldest of several starts", pat: MustRegexp(`(?s)<.*>`), tail: "<<<", want: 1000},
		{name: "literal prefix cut short at the end", pat: MustRegexp(`BEGIN.*`), tail: "yyBEG", want: 1002},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBuffer(0)
			s := newSearch(0, []Pattern{tt.pat})
			appendAll(b, lines+tt.tail)
			b.mu.RLock()
			_, ok, err := s.scanLocked(b, b.end)
			b.mu.RUnlock()
			if ok || err != nil {
				t.Fatalf("unexpected match or error %v", err)
			}
			if s.next[0] != tt.want {
				t.Errorf("resume offset = %d, want %d", s.next[0], tt.want)
			}
		})
	}
}

func TestExpect(t *testing.T) {
	errUnplugged := errors.New("device disconnected")
	tests := []struct {
		name      string
		before    []string // appended before Expect starts
		from      int64    // -1: End() after before
		after     []string // appended while Expect waits
		afterErr  error    // SetErr after the chunks
		want      []Pattern
		failOn    []Pattern
		wantIndex int
		wantStart int64
		wantEnd   int64
		wantFrom  int64
		wantData  string
		wantGroup []string
		wantErr   error // errors.Is target; failOnErr for *FailOnError
		wantFail  string
	}{
		{
			name: "reply after the cursor", before: []string{"> "}, from: -1, after: []string{"fw 1.0\r\n"},
			want: []Pattern{Literal("1.0")}, wantStart: 5, wantEnd: 8, wantFrom: 2, wantData: "fw 1.0", wantGroup: []string{"1.0"},
		},
		{
			name: "output before the cursor does not match", before: []string{"old 1.0\n"}, from: -1, after: []string{"new 1.1\n", "then 1.0\n"},
			want: []Pattern{Literal("1.0")}, wantStart: 21, wantEnd: 24, wantFrom: 8, wantData: "new 1.1\nthen 1.0", wantGroup: []string{"1.0"},
		},
		{
			name: "from in the past sees retained bytes", before: []string{"ready\n"}, from: 0,
			want: []Pattern{Literal("ready")}, wantStart: 0, wantEnd: 5, wantFrom: 0, wantData: "ready", wantGroup: []string{"ready"},
		},
		{
			name: "standalone expect continues after a previous match", before: []string{"ok 1\nok 2\n"}, from: 4,
			want: []Pattern{MustRegexp(`ok (\d)`)}, wantStart: 5, wantEnd: 9, wantFrom: 4, wantData: "\nok 2", wantGroup: []string{"ok 2", "2"},
		},
		{
			name: "straddling match", from: 0, after: []string{"vers", "ion: 2.", "7\n"},
			want: []Pattern{MustRegexp(`version: (\d+)\.(\d+)\n`)}, wantStart: 0, wantEnd: 13, wantData: "version: 2.7\n", wantGroup: []string{"version: 2.7\n", "2", "7"},
		},
		{
			name: "any of", from: 0, after: []string{"...", "FAIL: x\n"},
			want: []Pattern{Literal("PASS"), Literal("FAIL")}, wantIndex: 1, wantStart: 3, wantEnd: 7, wantData: "...FAIL", wantGroup: []string{"FAIL"},
		},
		{
			name: "fail_on before the reply", from: 0, after: []string{"HardFault at 0x0800\r\nprompt> "},
			want: []Pattern{Literal("prompt>")}, failOn: []Pattern{Literal("HardFault")},
			wantFail: `output matched fail_on pattern "HardFault": "HardFault at 0x0800"`,
		},
		{
			name: "fail_on at the same offset wins", from: 0, after: []string{"ERROR 5\n"},
			want: []Pattern{MustRegexp(`ERROR \d`)}, failOn: []Pattern{Literal("ERROR")},
			wantFail: `output matched fail_on pattern "ERROR": "ERROR 5"`,
		},
		{
			name: "fail_on after the reply is ignored", from: 0, after: []string{"ok\nHardFault\n"},
			want: []Pattern{Literal("ok")}, failOn: []Pattern{Literal("HardFault")}, wantStart: 0, wantEnd: 2, wantData: "ok", wantGroup: []string{"ok"},
		},
		{
			name: "fail_on only", from: 0, after: []string{"x\n", "Guru Meditation #1\n"},
			failOn:   []Pattern{MustRegexp(`Guru Meditation #\d`)},
			wantFail: `output matched fail_on pattern /Guru Meditation #\d/: "Guru Meditation #1"`,
		},
		{
			name: "device error", from: 0, after: []string{"partial"}, afterErr: errUnplugged,
			want: []Pattern{Literal("done")}, wantErr: errUnplugged,
		},
		{
			name: "match before the error wins", from: 0, after: []string{"done\n"}, afterErr: errUnplugged,
			want: []Pattern{Literal("done")}, wantStart: 0, wantEnd: 4, wantData: "done", wantGroup: []string{"done"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBuffer(0)
			appendAll(b, tt.before...)
			from := tt.from
			if from < 0 {
				from = b.End()
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			go func() {
				for _, c := range tt.after {
					time.Sleep(time.Millisecond)
					b.Append(time.Now(), []byte(c))
				}
				if tt.afterErr != nil {
					b.SetErr(tt.afterErr)
				}
			}()
			m, err := b.Expect(ctx, from, tt.want, tt.failOn)
			if tt.wantFail != "" {
				var fe *FailOnError
				if !errors.As(err, &fe) {
					t.Fatalf("Expect = %+v, %v; want a *FailOnError", m, err)
				}
				if err.Error() != tt.wantFail {
					t.Errorf("error = %s\nwant    %s", err, tt.wantFail)
				}
				return
			}
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Expect error = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Expect: %v", err)
			}
			if m.Index != tt.wantIndex || m.Start != tt.wantStart || m.End != tt.wantEnd || m.From != tt.wantFrom {
				t.Errorf("match index %d [%d, %d) from %d, want index %d [%d, %d) from %d", m.Index, m.Start, m.End, m.From, tt.wantIndex, tt.wantStart, tt.wantEnd, tt.wantFrom)
			}
			if string(m.Data) != tt.wantData {
				t.Errorf("Data = %q, want %q", m.Data, tt.wantData)
			}
			if !slices.Equal(m.Groups, tt.wantGroup) {
				t.Errorf("Groups = %q, want %q", m.Groups, tt.wantGroup)
			}
			if len(m.Names) != len(m.Groups) {
				t.Errorf("Names %q not parallel to Groups %q", m.Names, m.Groups)
			}
		})
	}
}

func TestExpectFailOnErrorFields(t *testing.T) {
	b := NewBuffer(0)
	appendAll(b, "boot\r\nassert \"x>0\" failed\xff\r\nnext\r\n")
	_, err := b.Expect(context.Background(), 0, []Pattern{Literal("never")}, []Pattern{MustRegexp(`assert .* failed`)})
	var fe *FailOnError
	if !errors.As(err, &fe) {
		t.Fatalf("Expect error = %v, want *FailOnError", err)
	}
	if fe.Offset != 6 {
		t.Errorf("Offset = %d, want 6", fe.Offset)
	}
	if want := `assert \"x>0\" failed\xff`; fe.Line != want {
		t.Errorf("Line = %s, want %s", fe.Line, want)
	}
	if fe.Pattern.String() != `assert .* failed` {
		t.Errorf("Pattern = %s", fe.Pattern)
	}
}

func TestExpectContext(t *testing.T) {
	causeStepTimeout := errors.New("step timed out after 20ms")
	tests := []struct {
		name    string
		ctx     func() (context.Context, context.CancelFunc)
		wantIs  []error
		wantMsg string
	}{
		{
			name: "deadline",
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 20*time.Millisecond)
			},
			wantIs:  []error{context.DeadlineExceeded},
			wantMsg: `wait for "1.0": context deadline exceeded`,
		},
		{
			name: "deadline with cause",
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeoutCause(context.Background(), 20*time.Millisecond, causeStepTimeout)
			},
			wantIs:  []error{context.DeadlineExceeded, causeStepTimeout},
			wantMsg: `wait for "1.0": step timed out after 20ms (context deadline exceeded)`,
		},
		{
			name: "cancelled",
			ctx: func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(10*time.Millisecond, cancel)
				return ctx, cancel
			},
			wantIs:  []error{context.Canceled},
			wantMsg: `wait for "1.0": context canceled`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBuffer(0)
			appendAll(b, "fw 0.9\n")
			ctx, cancel := tt.ctx()
			defer cancel()
			_, err := b.Expect(ctx, 0, []Pattern{Literal("1.0")}, nil)
			for _, target := range tt.wantIs {
				if !errors.Is(err, target) {
					t.Errorf("error %v is not %v", err, target)
				}
			}
			if err == nil || err.Error() != tt.wantMsg {
				t.Errorf("error = %v, want %s", err, tt.wantMsg)
			}
		})
	}
}

// SetErr ends a waiting Expect at once, not at its timeout.
func TestExpectErrorWakesWaiter(t *testing.T) {
	b := NewBuffer(0)
	errGone := fmt.Errorf("/dev/pts/9: %w", errors.New("device disconnected"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	time.AfterFunc(10*time.Millisecond, func() { b.SetErr(errGone) })
	start := time.Now()
	_, err := b.Expect(ctx, 0, []Pattern{Literal("never")}, nil)
	if !errors.Is(err, errGone) {
		t.Fatalf("Expect error = %v, want %v", err, errGone)
	}
	if ctx.Err() != nil || time.Since(start) > 5*time.Second {
		t.Errorf("Expect returned after %v, not at once", time.Since(start))
	}
}

// A cursor older than the retained bytes is moved to Start.
func TestExpectFromDroppedBytes(t *testing.T) {
	b := NewBuffer(16)
	appendAll(b, "match-me "+strings.Repeat(".", 20), "match-me")
	m, err := b.Expect(context.Background(), 0, []Pattern{Literal("match-me")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.From != b.Start() || m.Start != 29 || !bytes.HasSuffix(m.Data, []byte("match-me")) {
		t.Errorf("match %+v, want From=%d Start=29", m, b.Start())
	}
}

func TestFind(t *testing.T) {
	data := []byte("boot ok\nversion 1.2\nready\n")
	m, ok := Find(data, []Pattern{Literal("ready"), MustRegexp(`version (\d+)\.(\d+)`)})
	if !ok || m.Index != 1 || m.Start != 8 || m.End != 19 || fmt.Sprint(m.Groups) != "[version 1.2 1 2]" {
		t.Errorf("earliest match: %+v %v", m, ok)
	}
	m, ok = Find(data, []Pattern{Literal("boot"), MustRegexp(`b(o)ot`)})
	if !ok || m.Index != 0 {
		t.Errorf("a tie goes to the lower index: %+v", m)
	}
	m, _ = Find(data, []Pattern{MustRegexp(`(x)?ready`)})
	if len(m.Groups) != 2 || m.Groups[1] != "" {
		t.Errorf("a group that did not take part: %q", m.Groups)
	}
	if _, ok := Find(data, []Pattern{Literal("panic")}); ok {
		t.Error("matched what is not there")
	}
}

// A waiting Expect gets its match even when the bytes after it push it out
// of a small Buffer before the waiting goroutine runs: Append decides it.
func TestExpectMatchPushedOutBeforeTheWaiterRuns(t *testing.T) {
	for _, pat := range []Pattern{Literal("READY 42"), MustRegexp(`READY (\d+)\n`)} {
		t.Run(pat.String(), func(t *testing.T) {
			b := NewBuffer(64)
			type result struct {
				m   Match
				err error
			}
			done := make(chan result, 1)
			go func() {
				m, err := b.Expect(context.Background(), 0, []Pattern{pat}, nil)
				done <- result{m, err}
			}()
			for registered := false; !registered; time.Sleep(time.Millisecond) {
				b.mu.RLock()
				registered = len(b.expecters) == 1
				b.mu.RUnlock()
			}
			// The waiter is asleep; everything below is appended before it
			// can look.
			b.Append(time.Now(), []byte("boot\nREADY 42\n"))
			for range 8 {
				b.Append(time.Now(), bytes.Repeat([]byte("."), 63))
			}
			r := <-done
			if r.err != nil {
				t.Fatal(r.err)
			}
			if r.m.Start != 5 || !bytes.HasSuffix(r.m.Data, []byte("READY 42")) && !bytes.HasSuffix(r.m.Data, []byte("READY 42\n")) {
				t.Errorf("match %+v, want READY 42 at offset 5", r.m)
			}
			if b.Start() <= r.m.End {
				t.Fatalf("the match is still retained (start %d): the test shows nothing", b.Start())
			}
		})
	}
}
