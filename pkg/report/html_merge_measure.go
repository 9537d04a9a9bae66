package report

import (
	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
)

// shardMeasures gathers every measurement of a merged run by name, shard
// by shard, for the merged page's table and plots: each name's values in
// shard order, and what each shard measured of it. It is bounded as a
// sequence's measurements are (htmlSeries names, htmlSeriesPoints points
// each).
type shardMeasures struct {
	all   measureSeries
	spans map[string][]*shardSpan
}

// shardLine is one measurement over the whole run: its line of a
// sequence's table, over every shard, and its share in each.
type shardLine struct {
	*measureLine
	Shards []*shardSpan `json:"shards"`
}

// shardSpan is what one shard measured of a name. From is the ordinal,
// among the name's numbers, of the shard's first one: where the plot
// draws the shard's boundary.
type shardSpan struct {
	Label   string   `json:"label"`
	From    int      `json:"from"`
	Count   int      `json:"count"`
	Passed  int      `json:"passed"`
	Failed  int      `json:"failed"`
	Numbers int      `json:"numbers"`
	Min     *float64 `json:"min,omitempty"`
	Max     *float64 `json:"max,omitempty"`
}

func (s *shardMeasures) add(shard string, r *results.MeasureRecord) {
	st := recordStep(r)
	row := s.all.byName[r.Name]
	from := 0
	if row != nil {
		from = row.N
	}
	s.all.add(st)
	if row = s.all.byName[r.Name]; row == nil {
		return // past the bound of names
	}
	if s.spans == nil {
		s.spans = map[string][]*shardSpan{}
	}
	list := s.spans[r.Name]
	if len(list) == 0 || list[len(list)-1].Label != shard {
		list = append(list, &shardSpan{Label: shard, From: from})
		s.spans[r.Name] = list
	}
	sp := list[len(list)-1]
	sp.Count++
	if r.Outcome == runner.Passed {
		sp.Passed++
	} else {
		sp.Failed++
	}
	if f, ok := results.MeasuredNumber(r.Value); ok {
		sp.Numbers++
		if sp.Min == nil || f < *sp.Min {
			sp.Min = &f
		}
		if sp.Max == nil || f > *sp.Max {
			v := f
			sp.Max = &v
		}
	}
}

// rows are the lines of the table, in the order first measured.
func (s *shardMeasures) rows() []shardLine {
	out := []shardLine{}
	for _, row := range s.all.rows() {
		out = append(out, shardLine{measureLine: row, Shards: s.spans[row.Name]})
	}
	return out
}
