package report

import (
	"encoding/json"
	"fmt"

	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
)

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	}
	return 0, false
}

func (d *htmlData) memPoint(st *results.Step) {
	if st.Status != runner.Passed || st.Data == nil {
		return
	}
	addr, ok := number(st.Data["address"])
	vals, _ := st.Data["values"].([]any)
	if !ok || len(vals) == 0 {
		return
	}
	v, ok := number(vals[0])
	if !ok {
		return
	}
	label, _ := st.Data["label"].(string)
	key := fmt.Sprintf("0x%08x", uint64(addr))
	s := d.seq
	a := s.series[key]
	if a == nil {
		if len(s.seriesOrd) >= htmlSeries {
			return
		}
		a = &seriesAgg{Address: key, Label: label, Kind: st.Kind, stride: 1}
		s.series[key] = a
		s.seriesOrd = append(s.seriesOrd, key)
	}
	if st.Kind == "mem_poll" {
		a.Kind = "mem_poll"
		a.polls = true
	}
	at := st.StartedMS + st.DurationMS
	if samples, ok := st.Data["samples"].([]any); ok {
		for _, p := range samples {
			pair, _ := p.([]any)
			if len(pair) != 2 {
				continue
			}
			t, ok1 := number(pair[0])
			x, ok2 := number(pair[1])
			if ok1 && ok2 {
				a.add(results.Millis(t), x)
			}
		}
		return
	}
	a.add(at, v)
}

// seriesAgg is the plot of one address's values over time.
type seriesAgg struct {
	Address string `json:"address"`
	Label   string `json:"label"`
	Kind    string `json:"kind"`
	N       int    `json:"n"`
	// Stride is how many values each point stands for.
	Stride int          `json:"stride"`
	Points [][2]float64 `json:"points"`
	Min    float64      `json:"min"`
	Max    float64      `json:"max"`
	stride int
	skip   int
	polls  bool
}

func (a *seriesAgg) add(t results.Millis, v float64) {
	if a.N == 0 || v < a.Min {
		a.Min = v
	}
	if a.N == 0 || v > a.Max {
		a.Max = v
	}
	a.N++
	if a.skip > 0 {
		a.skip--
		return
	}
	a.Points = append(a.Points, [2]float64{float64(t), v})
	a.skip = a.stride - 1
	if len(a.Points) >= htmlSeriesPoints {
		kept := a.Points[:0]
		for i := 0; i < len(a.Points); i += 2 {
			kept = append(kept, a.Points[i])
		}
		a.Points = kept
		a.stride *= 2
		a.skip = a.stride - 1
	}
}
