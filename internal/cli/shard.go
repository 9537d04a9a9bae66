package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/hilrun/hilrun/pkg/report"
	"github.com/hilrun/hilrun/pkg/steps"
)

// shardSpec is --shard I/N: the I-th of N shares, counted from 1. The
// zero value runs everything.
type shardSpec struct {
	Index, Total int
}

func (s shardSpec) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Total) }

// on reports whether --shard was given.
func (s shardSpec) on() bool { return s.Total > 0 }

// parseShard reads --shard I/N.
func parseShard(v string) (shardSpec, error) {
	if v == "" {
		return shardSpec{}, nil
	}
	is, ns, ok := strings.Cut(v, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(is))
	n, err2 := strconv.Atoi(strings.TrimSpace(ns))
	switch {
	case !ok || err1 != nil || err2 != nil:
		return shardSpec{}, fmt.Errorf("--shard %q: want I/N, the I-th of N shares counted from 1, like 2/4", v)
	case n < 1:
		return shardSpec{}, fmt.Errorf("--shard %q: the number of shards must be 1 or more", v)
	case n > maxShards:
		return shardSpec{}, fmt.Errorf("--shard %q: at most %d shards", v, maxShards)
	case i < 1 || i > n:
		return shardSpec{}, fmt.Errorf("--shard %q: the shard must be from 1 to %d", v, n)
	}
	return shardSpec{Index: i, Total: n}, nil
}

// maxShards bounds N in --shard I/N.
const maxShards = 10000

// durations are the times the sequences of a previous run took, by
// sequence key (report.SequenceHead.Key), in microseconds.
type durations map[string]int64

// readDurations reads the sequences' durations from a JSON report of a
// previous run. A sequence listed twice keeps its longest time. A file
// that does not exist yet is a team's first run, or the first after the
// file was moved: warn says so, and the shards are balanced by count.
func readDurations(path string, warn func(string)) (durations, error) {
	heads, err := report.ReadSequences(hostGates().Files, path)
	if errors.Is(err, fs.ErrNotExist) {
		warn(fmt.Sprintf("--durations %s does not exist (yet): the shards are balanced by count; commit a merged report.json of this run there to balance the next ones by time", path))
		return nil, nil
	}
	if err != nil {
		if errors.Is(err, report.ErrNotReport) {
			return nil, fmt.Errorf("--durations: %w", err)
		}
		return nil, fmt.Errorf("--durations %s: %w", path, err)
	}
	d := durations{}
	for _, h := range heads {
		us := int64(math.Round(float64(h.DurationMS) * 1000))
		d[h.Key()] = max(d[h.Key()], us)
	}
	return d, nil
}

// shardSequences returns the sequences of shard s, in their order in
// seqs, and the estimated load of each shard (microseconds with
// durations, else a count).
//
// The assignment depends only on the sequences' files and the durations:
// the files are sorted by weight, longest first, then by path, and each
// goes to the shard with the least load so far, the lowest-numbered on a
// tie (greedy longest processing time). A sequence's weight is its time
// in durations; one that durations lacks weighs the mean of those it has,
// and with no durations every sequence weighs the same, so shards differ
// by at most one sequence.
func shardSequences(seqs []*steps.Sequence, s shardSpec, d durations) ([]*steps.Sequence, []int64) {
	share, load, _ := shardPlan(seqs, s, d)
	return share, load
}

// shardPlan is shardSequences that also returns an identifier of the whole
// assignment, the same in every shard of it (report.Shard's Plan).
func shardPlan(seqs []*steps.Sequence, s shardSpec, d durations) ([]*steps.Sequence, []int64, string) {
	type item struct {
		key    string
		weight int64
		bin    int
	}
	items := make([]item, len(seqs))
	var known, sum int64
	for i, seq := range seqs {
		items[i].key = report.SequenceHead{File: seq.File, Name: seq.Name}.Key()
		if w, ok := d[items[i].key]; ok {
			items[i].weight = w
			known++
			sum += w
		}
	}
	for i := range items {
		if _, ok := d[items[i].key]; ok {
			continue
		}
		switch {
		case known > 0:
			items[i].weight = sum / known
		default:
			items[i].weight = 1
		}
	}
	order := make([]int, len(items))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if items[a].weight != items[b].weight {
			if items[a].weight > items[b].weight {
				return -1
			}
			return 1
		}
		return strings.Compare(items[a].key, items[b].key)
	})
	load := make([]int64, s.Total)
	for _, i := range order {
		bin := 0
		for b := 1; b < len(load); b++ {
			if load[b] < load[bin] {
				bin = b
			}
		}
		items[i].bin = bin
		load[bin] += items[i].weight
	}
	var out []*steps.Sequence
	for i, seq := range seqs {
		if items[i].bin == s.Index-1 {
			out = append(out, seq)
		}
	}
	// The plan: N and each file's shard, in key order.
	h := sha256.New()
	fmt.Fprintf(h, "%d\n", s.Total)
	byKey := slices.Clone(order)
	slices.SortFunc(byKey, func(a, b int) int { return strings.Compare(items[a].key, items[b].key) })
	for _, i := range byKey {
		fmt.Fprintf(h, "%s\t%d\n", items[i].key, items[i].bin)
	}
	return out, load, hex.EncodeToString(h.Sum(nil))[:16]
}

// shardNote says what share of the selected sequences shard s runs.
func shardNote(s shardSpec, share, of int, load []int64, byTime bool) string {
	note := fmt.Sprintf("shard %s: %d of %s", s, share, count(of, "sequence"))
	if byTime && len(load) > 0 {
		note += fmt.Sprintf(", about %s of %s by the durations given", fmtMicros(load[s.Index-1]), fmtMicros(sumOf(load)))
	}
	return note
}

func sumOf(xs []int64) int64 {
	var n int64
	for _, x := range xs {
		n += x
	}
	return n
}

func fmtMicros(us int64) string {
	return strconv.FormatFloat(float64(us)/1e6, 'f', 1, 64) + "s"
}
