package report

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jstemmer/go-junit-report/v2/junit"
)

// Shard says which share of a run a report holds (hilrun run --shard I/N).
type Shard struct {
	// Index is I, from 1; Total is N.
	Index int `json:"index"`
	Total int `json:"total"`
	// Sequences counts the sequences of all N shards together.
	Sequences int `json:"sequences"`
	// Plan identifies the assignment of sequence files to shards: the
	// same in every shard of one run, different when the shards were cut
	// from other files, another -k or other durations.
	Plan string `json:"plan"`
}

func (s *Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Total) }

// The JUnit properties that carry a Shard.
const (
	propShard     = "shard"
	propSequences = "shard_sequences"
	propPlan      = "shard_plan"
)

func (s *Shard) properties() []junit.Property {
	return []junit.Property{
		{Name: propShard, Value: s.String()},
		{Name: propSequences, Value: strconv.Itoa(s.Sequences)},
		{Name: propPlan, Value: cleanLine(s.Plan)},
	}
}

// isShardProperty reports whether a testsuite property carries the shard.
func isShardProperty(name string) bool {
	return name == propShard || name == propSequences || name == propPlan
}

// shardFromProperties reads the Shard a testsuite's properties carry;
// nil when they carry none.
func shardFromProperties(props *[]junit.Property) (*Shard, error) {
	if props == nil {
		return nil, nil
	}
	var sh Shard
	found := 0
	for _, p := range *props {
		var err error
		switch p.Name {
		case propShard:
			found++
			i, n, ok := strings.Cut(p.Value, "/")
			if sh.Index, err = strconv.Atoi(i); err == nil && ok {
				sh.Total, err = strconv.Atoi(n)
			} else if err == nil {
				err = errors.New("no /")
			}
		case propSequences:
			found++
			sh.Sequences, err = strconv.Atoi(p.Value)
		case propPlan:
			found++
			sh.Plan = p.Value
		}
		if err != nil {
			return nil, fmt.Errorf("property %s %q: %v", p.Name, p.Value, err)
		}
	}
	switch found {
	case 0:
		return nil, nil
	case 3:
		return &sh, sh.check()
	}
	return nil, fmt.Errorf("properties %s, %s and %s come together", propShard, propSequences, propPlan)
}

func (s *Shard) check() error {
	if s.Total < 1 || s.Index < 1 || s.Index > s.Total || s.Sequences < 0 || s.Plan == "" {
		return fmt.Errorf("shard %d/%d of %d sequences, plan %q: not a shard", s.Index, s.Total, s.Sequences, s.Plan)
	}
	return nil
}

// ErrShards is wrapped by the errors of MergeJSON and MergeJUnit when the
// reports are not shards of one run: nothing is written.
var ErrShards = errors.New("the reports are not shards of one run")

// IncompleteError is the error of MergeJSON and MergeJUnit when the
// merged report, which was written, lacks sequences the shards were cut
// from: a shard's report is missing, or a shard did not run to its end.
type IncompleteError struct {
	// Missing are the shards, as I/N, of which no report was given.
	Missing []string
	// Have and Want count the sequences merged and those of all shards.
	Have, Want int
}

func (e *IncompleteError) Error() string {
	msg := fmt.Sprintf("the merged report holds %d of the %d sequences the shards were cut from", e.Have, e.Want)
	switch len(e.Missing) {
	case 0:
		msg += ": a shard did not run to its end"
	case 1:
		msg += ": shard " + e.Missing[0] + " is missing"
	default:
		msg += ": shards " + strings.Join(e.Missing, ", ") + " are missing"
	}
	return msg
}

// shardInput is what one report says of its shard.
type shardInput struct {
	file  string
	shard *Shard
	count int
}

// checkShards checks that the reports are all shards of one run, or none
// is a shard, and that no shard is given twice. It returns an
// *IncompleteError when sequences are missing, to be returned once the
// merged report is written.
func checkShards(inputs []shardInput, merged int) (incomplete, err error) {
	var first *shardInput
	seen := map[int]string{}
	for i := range inputs {
		in := &inputs[i]
		if in.shard == nil && in.count == 0 {
			continue // an empty report: a JUnit report of an empty shard says nothing
		}
		if in.shard == nil {
			if first != nil {
				return nil, fmt.Errorf("%w: %s is shard %s, %s no shard", ErrShards, first.file, first.shard, in.file)
			}
			continue
		}
		if first == nil {
			for _, prev := range inputs[:i] {
				if prev.shard == nil && prev.count > 0 {
					return nil, fmt.Errorf("%w: %s is shard %s, %s no shard", ErrShards, in.file, in.shard, prev.file)
				}
			}
			first = in
		}
		s, f := in.shard, first.shard
		if s.Total != f.Total || s.Plan != f.Plan || s.Sequences != f.Sequences {
			return nil, fmt.Errorf("%w: %s is shard %s of %d sequences (plan %s), %s shard %s of %d (plan %s): the shards must be cut from the same files, -k and --durations",
				ErrShards, first.file, f, f.Sequences, f.Plan, in.file, s, s.Sequences, s.Plan)
		}
		if prev, ok := seen[s.Index]; ok && prev != in.file {
			return nil, fmt.Errorf("%w: %s and %s are both shard %s", ErrDuplicate, prev, in.file, s)
		}
		seen[s.Index] = in.file
	}
	if first == nil || merged >= first.shard.Sequences {
		return nil, nil
	}
	inc := &IncompleteError{Have: merged, Want: first.shard.Sequences}
	for i := 1; i <= first.shard.Total; i++ {
		if _, ok := seen[i]; !ok {
			inc.Missing = append(inc.Missing, fmt.Sprintf("%d/%d", i, first.shard.Total))
		}
	}
	return inc, nil
}
