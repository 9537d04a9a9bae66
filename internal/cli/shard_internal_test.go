package cli

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/steps"
)

func TestParseShard(t *testing.T) {
	tests := []struct {
		in      string
		want    shardSpec
		wantErr string
	}{
		{"", shardSpec{}, ""},
		{"1/1", shardSpec{1, 1}, ""},
		{"3/4", shardSpec{3, 4}, ""},
		{" 2 / 2 ", shardSpec{2, 2}, ""},
		{"0/4", shardSpec{}, "from 1 to 4"},
		{"5/4", shardSpec{}, "from 1 to 4"},
		{"-1/4", shardSpec{}, "from 1 to 4"},
		{"1/0", shardSpec{}, "1 or more"},
		{"1/-2", shardSpec{}, "1 or more"},
		{"2", shardSpec{}, "want I/N"},
		{"a/b", shardSpec{}, "want I/N"},
		{"1/2/3", shardSpec{}, "want I/N"},
		{"1/100000", shardSpec{}, "at most"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseShard(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseShard(%q) error = %v, want one saying %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("parseShard(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}

func seqsNamed(files ...string) []*steps.Sequence {
	var out []*steps.Sequence
	for _, f := range files {
		out = append(out, &steps.Sequence{Name: strings.TrimSuffix(f, ".yaml"), File: f})
	}
	return out
}

// shards returns the files of every shard of n.
func shards(seqs []*steps.Sequence, n int, d durations) [][]string {
	var out [][]string
	for i := 1; i <= n; i++ {
		share, _ := shardSequences(seqs, shardSpec{i, n}, d)
		var files []string
		for _, s := range share {
			files = append(files, s.File)
		}
		out = append(out, files)
	}
	return out
}

// TestShardPartition checks that the shards of N, for every N, hold every
// file exactly once, keep the run's order, and differ by at most one file
// when balanced by count.
func TestShardPartition(t *testing.T) {
	var files []string
	for i := range 11 {
		files = append(files, fmt.Sprintf("s%02d.yaml", i))
	}
	seqs := seqsNamed(files...)
	for n := 1; n <= 13; n++ {
		got := shards(seqs, n, nil)
		var all []string
		lo, hi := len(files), 0
		for _, share := range got {
			all = append(all, share...)
			lo, hi = min(lo, len(share)), max(hi, len(share))
			if !slices.IsSortedFunc(share, func(a, b string) int { return slices.Index(files, a) - slices.Index(files, b) }) {
				t.Errorf("N=%d: share %v is not in run order", n, share)
			}
		}
		slices.Sort(all)
		if !slices.Equal(all, files) {
			t.Errorf("N=%d: the shards hold %v, want every file once", n, all)
		}
		if hi-lo > 1 {
			t.Errorf("N=%d: shard sizes from %d to %d, want them within one", n, lo, hi)
		}
	}
}

// TestShardDeterministic checks that the assignment depends on the files
// and durations only, not on the order the files were named in.
func TestShardDeterministic(t *testing.T) {
	files := []string{"a.yaml", "b.yaml", "c.yaml", "d.yaml", "e.yaml", "f.yaml", "g.yaml"}
	d := durations{"a.yaml": 5e6, "b.yaml": 5e6, "c.yaml": 1e6, "d.yaml": 3e6, "e.yaml": 3e6, "f.yaml": 2e6}
	for _, dd := range []durations{nil, d} {
		want := shards(seqsNamed(files...), 3, dd)
		for range 20 {
			shuffled := slices.Clone(files)
			rand.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			got := shards(seqsNamed(shuffled...), 3, dd)
			for i := range got {
				slices.Sort(got[i])
				w := slices.Clone(want[i])
				slices.Sort(w)
				if !slices.Equal(got[i], w) {
					t.Fatalf("files in order %v: shard %d = %v, want %v", shuffled, i+1, got[i], w)
				}
			}
		}
	}
}

// TestShardByDurations checks the greedy longest-first assignment on
// known times, the mean for a file the report lacks, and that paths
// match whatever way they were written.
func TestShardByDurations(t *testing.T) {
	seqs := seqsNamed("long.yaml", "./mid1.yaml", "mid2.yaml", "short1.yaml", "short2.yaml", "new.yaml")
	d := durations{"long.yaml": 10e6, "mid1.yaml": 6e6, "mid2.yaml": 5e6, "short1.yaml": 1e6, "short2.yaml": 1e6, "gone.yaml": 99e6}
	// Weights: long 10, mid1 6, mid2 5, new 4.6 (the mean), short 1, 1.
	// Longest first: long→1, mid1→2, mid2→2 (6 < 10), new→1? no: 2 has 11,
	// 1 has 10, so new→1 (14.6), short1→2 (12), short2→2 (13).
	got := shards(seqs, 2, d)
	want := [][]string{{"long.yaml", "new.yaml"}, {"./mid1.yaml", "mid2.yaml", "short1.yaml", "short2.yaml"}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("shards = %v, want %v", got, want)
	}
	_, load := shardSequences(seqs, shardSpec{1, 2}, d)
	if load[0] != 14.6e6 || load[1] != 13e6 {
		t.Errorf("loads = %v, want [14600000 13000000]", load)
	}
}
