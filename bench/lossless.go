// Scenario (d): a full-speed stream logged with no byte lost.

package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hilrun/hilrun/pkg/sim"
)

// StreamReport is scenario (d).
type StreamReport struct {
	Command    string  `json:"command"`
	Chunk      int64   `json:"chunk"`
	Iterations int     `json:"iterations"`
	Seconds    float64 `json:"seconds"`
	// Sent is the number of bytes the board sent in reply to the stream
	// commands; Logged the size of the log from the first reply on.
	Sent   int64 `json:"sent"`
	Logged int64 `json:"logged"`
	// Lost counts bytes sent but missing from the log; Identical reports
	// that the log holds exactly what was sent.
	Lost      int64  `json:"lost"`
	Identical bool   `json:"identical"`
	Timeline  string `json:"timeline"`
	Problem   string `json:"problem,omitempty"`
	MaxRSSKiB int64  `json:"max_rss_kib"`
}

// MBps is the logged stream's speed in MB (10^6 bytes) per second.
func (s *StreamReport) MBps() float64 { return ratio(float64(s.Sent)/1e6, s.Seconds) }

// lossless runs scenario (d): a logged stream at full speed for
// StreamFor, then a byte-for-byte check of the log.
func (b *bencher) lossless(ctx context.Context) (*StreamReport, error) {
	o := b.opts
	dir := filepath.Join(o.WorkDir, "lossless-logs")
	rep := &StreamReport{
		Chunk:   o.StreamChunk,
		Command: fmt.Sprintf("HILBENCH_CHILD=1 hilbench stream-log -serial PATH -chunk %d -for %s -logdir DIR", o.StreamChunk, o.StreamFor),
	}
	err := b.withBoard(func(board *sim.Board) error {
		args := []string{"stream-log", "-serial", board.SerialPath(), "-chunk", strconv.FormatInt(o.StreamChunk, 10),
			"-for", o.StreamFor.String(), "-logdir", dir, "-timeout", (o.StreamFor + 2*time.Minute).String()}
		out, rss, err := b.side(ctx, false, args, o.StreamFor+5*time.Minute)
		if err != nil {
			return err
		}
		rep.Iterations, rep.Seconds, rep.MaxRSSKiB = out.Iterations, out.Seconds, rss
		return verifyLog(rep, out.Log, out.Cursors)
	})
	os.RemoveAll(dir) // gigabytes
	if err != nil {
		return rep, fmt.Errorf("lossless stream: %w", err)
	}
	state := "byte-identical"
	if !rep.Identical {
		state = "NOT identical: " + rep.Problem
	}
	b.progress("d: %d x %d bytes in %.1f s (%.1f MB/s), %d lost, log %s, timeline %s", rep.Iterations, rep.Chunk, rep.Seconds, rep.MBps(), rep.Lost, state, rep.Timeline)
	return rep, nil
}

// verifyLog checks the raw log at path against what the board sent: from
// cursors[0] on, each reply (StreamData(chunk) and then the line ending and
// prompt) back to back, each starting at its cursor, and nothing after the
// last. It also checks that the timeline's received chunks tile the log.
func verifyLog(rep *StreamReport, path string, cursors []int64) error {
	if path == "" || len(cursors) == 0 {
		return errors.New("the stream run reported no log or no replies")
	}
	block := append(sim.StreamData(int(rep.Chunk), "crlf"), "\r\n"+prompt...)
	rep.Sent = int64(len(cursors)) * int64(len(block))
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	rep.Logged = fi.Size() - cursors[0]
	rep.Lost = max(0, rep.Sent-rep.Logged)
	rep.Identical = true
	fail := func(format string, args ...any) {
		if rep.Identical {
			rep.Problem = fmt.Sprintf(format, args...)
		}
		rep.Identical = false
	}
	got := make([]byte, len(block))
	for i, c := range cursors {
		if want := cursors[0] + int64(i)*int64(len(block)); c != want {
			fail("reply %d began at offset %d, want %d", i, c, want)
			break
		}
		n, err := f.ReadAt(got, c)
		if n < len(got) {
			fail("reply %d: log ends %d bytes into it (%v)", i, n, err)
			break
		}
		if !bytes.Equal(got, block) {
			j := 0
			for j < len(got) && got[j] == block[j] {
				j++
			}
			fail("reply %d differs at byte %d (log offset %d)", i, j, c+int64(j))
			break
		}
	}
	if end := cursors[len(cursors)-1] + int64(len(block)); fi.Size() != end && rep.Identical {
		fail("the log has %d bytes, want %d", fi.Size(), end)
	}
	rep.Timeline = checkTimeline(strings.TrimSuffix(path, ".log")+".timeline.jsonl", fi.Size())
	return nil
}

// checkTimeline reads a console timeline and checks that its "rx" entries
// are contiguous from offset 0 and add up to size. It returns "ok" or what
// is wrong.
func checkTimeline(path string, size int64) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var next int64
	entries := 0
	for sc.Scan() {
		var e struct {
			Dir string `json:"dir"`
			Off int64  `json:"off"`
			N   int64  `json:"n"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return fmt.Sprintf("line %d: %v", entries+1, err)
		}
		if e.Dir != "rx" {
			continue
		}
		if e.Off != next {
			return fmt.Sprintf("rx entry at offset %d, want %d", e.Off, next)
		}
		next += e.N
		entries++
	}
	if err := sc.Err(); err != nil {
		return err.Error()
	}
	if next != size {
		return fmt.Sprintf("rx entries add up to %d bytes, the log has %d", next, size)
	}
	return fmt.Sprintf("ok (%d rx entries)", entries)
}
