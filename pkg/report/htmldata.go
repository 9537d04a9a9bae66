package report

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
)

// Bounds of the HTML report's data. They keep a page from a run of any
// length under 20 MB and quick to open; what they leave out is counted on
// the page and stays in the event file and the console logs.
const (
	// htmlHeadSteps and htmlTailSteps are how many steps outside repeats
	// the page lists from the start and the end of a sequence;
	// htmlProblemSteps how many that did not pass it lists from between.
	htmlHeadSteps    = 5000
	htmlTailSteps    = 1000
	htmlProblemSteps = 1000
	// htmlStepBytes bounds one step's JSON; a larger step loses its saved
	// values and data on the page.
	htmlStepBytes = 64 << 10
	// htmlHeadRecords and htmlTailRecords are how many timeline records
	// of a console the waterfall shows from its start and its end.
	htmlHeadRecords = 20000
	htmlTailRecords = 20000
	// htmlChunkText bounds the bytes of one received chunk the waterfall
	// shows; htmlConsoleText the bytes of one console.
	htmlChunkText   = 2048
	htmlConsoleText = 4 << 20
	// htmlContexts bounds the steps per sequence that get the console
	// bytes around them; htmlContextBytes the bytes each gets, of which
	// htmlContextBefore come before the step started.
	htmlContexts      = 200
	htmlContextBytes  = 6 << 10
	htmlContextBefore = 1 << 10
	// htmlSeriesPoints bounds the points of one memory plot; past it,
	// every other point is dropped and the stride doubles.
	htmlSeriesPoints = 2000
	htmlSeries       = 32
	// htmlJitterExact is how many periods of a repeat are kept as they
	// are; past it they go to a histogram of htmlJitterBins bins.
	htmlJitterExact = 4096
	htmlJitterBins  = 120
	htmlJitters     = 32
	// htmlPictures and htmlPictureBytes bound the pictures embedded per
	// report; a picture larger than htmlPictureMax is never embedded.
	htmlPictures     = 100
	htmlPictureBytes = 8 << 20
	htmlPictureMax   = 2 << 20
	// timelineLineMax is the longest timeline line read; longer lines (a
	// huge send) are counted and skipped.
	timelineLineMax = 4 << 20
)

// RunInfo is what a run's reports say about how it was started: the
// hilrun version, the command line and what each device and probe was
// bound to. It is written beside the event file (RunInfoFile) so that a
// report made later from the log folder says it too.
type RunInfo struct {
	Version string    `json:"version,omitempty"`
	Command []string  `json:"command,omitempty"`
	Started time.Time `json:"started,omitzero"`
	Bench   []Binding `json:"bench,omitempty"`
}

// Binding says what one device, probe or camera of a sequence ran on.
type Binding struct {
	Sequence string `json:"sequence"`
	Kind     string `json:"kind"` // "device", "probe" or "camera"
	Name     string `json:"name"`
	Target   string `json:"target"`
}

// RunInfoFile is the name of the run information file, beside the event
// file: "<stamp>-" + RunInfoFile for "<stamp>-events.jsonl".
const RunInfoFile = "run.json"

// WriteRunInfo writes info as JSON to path.
func WriteRunInfo(path string, info RunInfo) error {
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return fmt.Errorf("write the run information: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return fmt.Errorf("write the run information: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o666); err != nil {
		return fmt.Errorf("write the run information: %w", err)
	}
	return nil
}

// ReadRunInfo reads a file WriteRunInfo wrote.
func ReadRunInfo(path string) (RunInfo, error) {
	var info RunInfo
	b, err := os.ReadFile(path)
	if err != nil {
		return info, fmt.Errorf("read the run information: %w", err)
	}
	if err := json.Unmarshal(b, &info); err != nil {
		return info, fmt.Errorf("read the run information %s: %w", path, err)
	}
	return info, nil
}

// htmlData writes the page's data: one JSON document, as the event file
// is read, in memory bounded by the constants above.
type htmlData struct {
	w      *jsonWriter
	events string
	opts   HTMLOptions

	pictures   []string // paths, in the order they are embedded
	pictureIdx map[string]int
	pictureSum int64

	seq      *seqData
	nseq     int
	readErrs []string
}

// seqData is what the page needs of the sequence being read beyond its
// steps.
type seqData struct {
	startedAt time.Time
	nsteps    int // steps outside repeats seen
	written   int // steps written
	problems  int
	tail      []*results.Step // ring of the last steps not written
	tailNext  int
	leftOut   int
	contexts  []stepWindow
	jitter    map[string]*jitterAgg
	jitterOrd []string
	series    map[string]*seriesAgg
	seriesOrd []string
	expects   []expectMark
}

// stepWindow is a step whose console bytes the page shows.
type stepWindow struct {
	path       string
	start, end time.Duration
}

// expectMark is a match of an expect: where it is in a console's stream.
type expectMark struct {
	Path   string `json:"path"`
	Offset int64  `json:"off"`
	Len    int    `json:"n"`
}

func (d *htmlData) printf(format string, args ...any) { d.w.printf(format, args...) }

// value writes v as compact JSON.
func (d *htmlData) value(v any) {
	if d.w.err != nil {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		d.w.err = err
		return
	}
	_, d.w.err = d.w.w.Write(b)
}

func (d *htmlData) write(seqs []results.Sequence, info RunInfo, generated time.Time) error {
	passed, interrupted := len(seqs) > 0, false
	for _, s := range seqs {
		passed = passed && s.Status == runner.Passed
		interrupted = interrupted || s.Status == runner.Interrupted
	}
	d.printf(`{"format":1,"passed":%t,"interrupted":%t,"generated":`, passed, interrupted)
	d.value(stampMS(generated))
	d.printf(`,"info":`)
	// The page shows when the run started to the millisecond, as it does
	// every other time.
	d.value(struct {
		RunInfo
		Started string `json:"started,omitempty"`
	}{info, stampMS(info.Started)})
	d.printf(`,"sequences":[`)
	z := &results.Summarizer{
		Options: d.opts.Summary,
		OnStart: func(i int, s *results.Sequence) { d.startSequence(i, s) },
		OnStep:  func(_ int, st *results.Step) { d.step(st) },
		OnEnd: func(i int, s *results.Sequence, c results.Counts) {
			if len(s.Logs) == 0 && d.opts.ConsoleDir != nil {
				s.Logs = consoleLogs(d.opts.ConsoleDir(i))
			}
			d.endSequence(s, c)
		},
	}
	err := results.Read(d.events, func(r *results.Record) error {
		if r.Type == results.RecordStep && r.Step != nil && d.seq != nil {
			d.observe(r.Step)
		}
		z.Add(r)
		return d.w.err
	})
	z.Close()
	if errors.Is(err, results.ErrTruncated) {
		d.readErrs = append(d.readErrs, err.Error())
		err = nil
	}
	if err != nil {
		return err
	}
	d.printf(`],"problems":`)
	d.value(append([]string{}, d.readErrs...))
	d.printf(`,"pictures":%d}`, len(d.pictures))
	return d.w.err
}

func (d *htmlData) startSequence(i int, s *results.Sequence) {
	if d.nseq > 0 {
		d.printf(",")
	}
	d.nseq++
	d.seq = &seqData{startedAt: s.StartedAt, jitter: map[string]*jitterAgg{}, series: map[string]*seriesAgg{}}
	d.printf(`{"index":%d,"name":`, i)
	d.value(s.Name)
	d.printf(`,"file":`)
	d.value(s.File)
	d.printf(`,"started_at":`)
	d.value(stampMS(s.StartedAt))
	d.printf(`,"steps":[`)
}

// step takes a step outside repeats, as the summary rule passes it on.
func (d *htmlData) step(st *results.Step) {
	s := d.seq
	s.nsteps++
	problem := isProblem(st.Status) && !st.IsContainer()
	if problem && len(s.contexts) < htmlContexts {
		s.contexts = append(s.contexts, stepWindow{path: st.Path, start: st.StartedMS.D(), end: st.StartedMS.D() + st.DurationMS.D()})
	}
	if st.Kind == "repeat" && st.Repeat != nil && len(s.contexts) < htmlContexts {
		for _, f := range st.Repeat.Failures {
			for _, dt := range f.Detail {
				if isProblem(dt.Status) && len(s.contexts) < htmlContexts {
					s.contexts = append(s.contexts, stepWindow{path: dt.Path, start: dt.StartedMS.D(), end: dt.StartedMS.D() + dt.DurationMS.D()})
				}
			}
		}
	}
	switch {
	case s.nsteps <= htmlHeadSteps:
		d.writeStep(st)
	case (isProblem(st.Status) || st.Kind == "repeat") && s.problems < htmlProblemSteps:
		s.problems++
		d.writeStep(st)
	default:
		cp := *st
		if len(s.tail) < htmlTailSteps {
			s.tail = append(s.tail, &cp)
			return
		}
		s.leftOut++
		s.tail[s.tailNext] = &cp
		s.tailNext = (s.tailNext + 1) % htmlTailSteps
	}
}

func (d *htmlData) writeStep(st *results.Step) {
	s := d.seq
	out := reportStep(*st)
	out.Attachments = nil
	for _, a := range st.Attachments {
		if i := d.picture(a); i >= 0 {
			out.Attachments = append(out.Attachments, fmt.Sprintf("#%d", i))
		}
	}
	if out.Data != nil && st.Kind == "camera" {
		// The pictures are embedded: their names say enough.
		out.Data = maps(out.Data)
		if checks, ok := out.Data["checks"]; ok {
			out.Data["checks"] = d.renameFrames(checks)
		}
		if frames, ok := out.Data["frames"].([]any); ok {
			names := make([]any, len(frames))
			for i, f := range frames {
				if p, ok := f.(string); ok {
					names[i] = filepath.Base(p)
				}
			}
			out.Data["frames"] = names
		}
	}
	b, err := json.Marshal(out)
	if err == nil && len(b) > htmlStepBytes {
		out.Saved, out.Data = nil, map[string]any{"left_out": fmt.Sprintf("%d bytes of saved values and data; the JSON report has them", len(b))}
		b, err = json.Marshal(out)
	}
	if err != nil {
		d.w.err = err
		return
	}
	if s.written > 0 {
		d.printf(",")
	}
	s.written++
	if d.w.err == nil {
		_, d.w.err = d.w.w.Write(b)
	}
}

func maps(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// renameFrames replaces the frame paths of expect_image checks by the
// numbers of the embedded pictures.
func (d *htmlData) renameFrames(v any) any {
	list, ok := v.([]any)
	if !ok {
		return v
	}
	out := make([]any, len(list))
	for i, c := range list {
		m, ok := c.(map[string]any)
		if !ok {
			out[i] = c
			continue
		}
		m = maps(m)
		if f, ok := m["frame"].(string); ok {
			m["frame"] = filepath.Base(f)
			if n := d.picture(f); n >= 0 {
				m["picture"] = n
			}
		}
		out[i] = m
	}
	return out
}

// picture returns the number of the embedded picture at path, adding it
// when the bounds allow; -1 when it is not embedded.
func (d *htmlData) picture(path string) int {
	if i, ok := d.pictureIdx[path]; ok {
		return i
	}
	if len(d.pictures) >= htmlPictures {
		return -1
	}
	p := d.resolve(path)
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > htmlPictureMax || d.pictureSum+fi.Size() > htmlPictureBytes {
		return -1
	}
	d.pictureSum += fi.Size()
	if d.pictureIdx == nil {
		d.pictureIdx = map[string]int{}
	}
	d.pictureIdx[path] = len(d.pictures)
	d.pictures = append(d.pictures, p)
	return len(d.pictures) - 1
}

// resolve finds a file the run named (a console log, a picture) when the
// log folder has moved since: beside the event file, in the folder of the
// same name.
func (d *htmlData) resolve(path string) string {
	if _, err := os.Stat(path); err == nil {
		return path
	}
	alt := filepath.Join(filepath.Dir(d.events), filepath.Base(filepath.Dir(path)), filepath.Base(path))
	if _, err := os.Stat(alt); err == nil {
		return alt
	}
	return path
}

// observe sees every step record, iterations included, for the plots.
func (d *htmlData) observe(st *results.Step) {
	s := d.seq
	if chain := repeatIteration(st.Path); chain != "" {
		j := s.jitter[chain]
		if j == nil && len(s.jitterOrd) < htmlJitters {
			j = &jitterAgg{}
			s.jitter[chain] = j
			s.jitterOrd = append(s.jitterOrd, chain)
		}
		if j != nil {
			j.step(st)
		}
	}
	switch st.Kind {
	case "mem_read", "mem_poll":
		d.memPoint(st)
	case "send", "expect":
		if st.Data != nil {
			off, ok1 := number(st.Data["offset"])
			m, ok2 := st.Data["match"].(string)
			if ok1 && ok2 && len(s.expects) < htmlHeadRecords {
				s.expects = append(s.expects, expectMark{Path: st.Path, Offset: int64(off), Len: len(m)})
			}
		}
	}
	if st.Kind == "repeat" {
		if j := s.jitter[st.Path]; j != nil {
			j.name = st.Name
			if st.Data != nil {
				if e, ok := number(st.Data["every_ms"]); ok {
					j.period = e
				}
				if l, ok := number(st.Data["max_late_us"]); ok {
					j.maxLate, j.timed = l, true
				}
			}
		}
	}
}

// repeatIteration returns the path of the innermost repeat a step at path
// is directly inside, or "" outside repeats: "4#2.1" gives "4".
func repeatIteration(path string) string {
	i := strings.LastIndexByte(path, '#')
	if i < 0 {
		return ""
	}
	return path[:i]
}

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

// jitterAgg measures the periods of a repeat: from the start of each
// iteration to the start of the next.
type jitterAgg struct {
	name      string
	period    float64 // every, in ms; 0 when not known
	maxLate   float64 // µs
	timed     bool
	iteration string // the path prefix of the current iteration
	start     results.Millis
	have      bool
	n         int
	exact     []float64 // ms
	hist      *fixedHist
	min, max  float64
}

func (j *jitterAgg) step(st *results.Step) {
	i := strings.LastIndexByte(st.Path, '#')
	rest := st.Path[i+1:]
	it := st.Path[:i+1] + rest[:strings.IndexByte(rest+".", '.')]
	if it == j.iteration {
		j.start = min(j.start, st.StartedMS)
		return
	}
	if j.have {
		j.period1(float64(st.StartedMS - j.start))
	}
	j.iteration, j.start, j.have = it, st.StartedMS, true
}

// period1 records one period. The start of an iteration is seen at its
// first step's end; the difference of starts is still its period.
func (j *jitterAgg) period1(p float64) {
	if j.n == 0 || p < j.min {
		j.min = p
	}
	if j.n == 0 || p > j.max {
		j.max = p
	}
	j.n++
	if j.hist == nil {
		j.exact = append(j.exact, p)
		if len(j.exact) > htmlJitterExact {
			j.hist = newFixedHist(j.exact, htmlJitterBins)
			j.exact = nil
		}
		return
	}
	j.hist.add(p)
}

// fixedHist is a histogram over a range chosen from the first values, with
// the values outside it counted at its ends.
type fixedHist struct {
	lo, width float64
	counts    []int
}

func newFixedHist(first []float64, bins int) *fixedHist {
	s := slices.Clone(first)
	slices.Sort(s)
	lo, hi := s[0], s[len(s)-1]
	span := hi - lo
	if span <= 0 {
		span = math.Max(math.Abs(lo)*0.01, 0.001)
	}
	lo -= span / 2
	hi += span / 2
	h := &fixedHist{lo: lo, width: (hi - lo) / float64(bins), counts: make([]int, bins)}
	for _, v := range first {
		h.add(v)
	}
	return h
}

func (h *fixedHist) add(v float64) {
	i := int((v - h.lo) / h.width)
	h.counts[min(max(i, 0), len(h.counts)-1)]++
}

// quantile is the nearest-rank q-quantile, to a bin's width.
func (h *fixedHist) quantile(q float64, n int) float64 {
	rank := max(int(math.Ceil(q*float64(n))), 1)
	seen := 0
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return h.lo + (float64(i)+0.5)*h.width
		}
	}
	return h.lo + float64(len(h.counts))*h.width
}

// jitterOut is a repeat's periods as the page shows them.
type jitterOut struct {
	Path     string  `json:"path"`
	Name     string  `json:"name"`
	PeriodMS float64 `json:"period_ms,omitempty"`
	// MaxLateUS is the runner's own measure: how late the latest
	// iteration started against its deadline.
	MaxLateUS *float64 `json:"max_late_us,omitempty"`
	N         int      `json:"n"`
	MinMS     float64  `json:"min_ms"`
	P50MS     float64  `json:"p50_ms"`
	P90MS     float64  `json:"p90_ms"`
	P99MS     float64  `json:"p99_ms"`
	MaxMS     float64  `json:"max_ms"`
	// Exact says the percentiles are exact; else they are to a bin.
	Exact bool `json:"exact"`
	// The histogram: Bins counts from LoMS, WidthMS wide each.
	LoMS    float64 `json:"lo_ms"`
	WidthMS float64 `json:"width_ms"`
	Bins    []int   `json:"bins"`
}

func (j *jitterAgg) out(path string) jitterOut {
	o := jitterOut{Path: path, Name: j.name, PeriodMS: j.period, N: j.n, MinMS: j.min, MaxMS: j.max}
	if j.timed {
		late := j.maxLate
		o.MaxLateUS = &late
	}
	h := j.hist
	if h == nil {
		o.Exact = true
		s := slices.Clone(j.exact)
		slices.Sort(s)
		q := func(q float64) float64 { return s[max(int(math.Ceil(q*float64(len(s)))), 1)-1] }
		o.P50MS, o.P90MS, o.P99MS = q(0.5), q(0.9), q(0.99)
		h = newFixedHist(j.exact, min(max(2*int(math.Sqrt(float64(len(s)))), 10), htmlJitterBins))
	} else {
		o.P50MS, o.P90MS, o.P99MS = h.quantile(0.5, j.n), h.quantile(0.9, j.n), h.quantile(0.99, j.n)
	}
	o.LoMS, o.WidthMS, o.Bins = h.lo, h.width, h.counts
	for _, f := range []*float64{&o.MinMS, &o.P50MS, &o.P90MS, &o.P99MS, &o.MaxMS, &o.LoMS} {
		*f = math.Round(*f*1000) / 1000
	}
	o.WidthMS = math.Round(o.WidthMS*1e6) / 1e6
	return o
}

func (d *htmlData) endSequence(seq *results.Sequence, c results.Counts) {
	s := d.seq
	// The last steps, oldest first.
	tail := append(s.tail[s.tailNext:len(s.tail):len(s.tail)], s.tail[:s.tailNext]...)
	for _, st := range tail {
		d.writeStep(st)
	}
	d.printf(`],"steps_seen":%d,"steps_left_out":%d,"status":`, s.nsteps, s.leftOut)
	d.value(reportStatus(seq.Status))
	d.printf(`,"interrupted":%t,"duration_ms":`, seq.Status == runner.Interrupted)
	d.value(seq.DurationMS)
	d.printf(`,"error":`)
	d.value(seq.Error)
	d.printf(`,"counts":`)
	d.value(c)
	d.printf(`,"counted":`)
	d.value(c.Text())
	d.printf(`,"jitter":[`)
	n := 0
	for _, p := range s.jitterOrd {
		j := s.jitter[p]
		if !j.timed || j.n == 0 {
			continue
		}
		if n > 0 {
			d.printf(",")
		}
		n++
		d.value(j.out(p))
	}
	d.printf(`],"series":[`)
	n = 0
	for _, k := range s.seriesOrd {
		a := s.series[k]
		if a.N < 2 && !a.polls {
			continue
		}
		if n > 0 {
			d.printf(",")
		}
		n++
		a.Stride = a.stride
		d.value(a)
	}
	d.printf(`],"consoles":[`)
	names := make([]string, 0, len(seq.Logs))
	for name := range seq.Logs {
		names = append(names, name)
	}
	sort.Strings(names)
	n = 0
	for _, name := range names {
		if n > 0 {
			d.printf(",")
		}
		n++
		d.console(name, d.resolve(seq.Logs[name]), nil)
	}
	for _, t := range seq.Transcripts {
		if _, ok := seq.Logs[t.Console]; ok {
			continue
		}
		if n > 0 {
			d.printf(",")
		}
		n++
		d.console(t.Console, "", &t)
	}
	d.printf(`]}`)
	d.seq = nil
}

// consoleRecord is one line of a console's timeline as the page shows it:
// [ms since the sequence started, dir, stream offset, bytes, text].
type consoleRecord struct {
	ms   float64
	dir  string
	off  int64
	n    int
	text string
}

func (r *consoleRecord) MarshalJSON() ([]byte, error) {
	return json.Marshal([]any{math.Round(r.ms*1000) / 1000, r.dir, r.off, r.n, r.text})
}

// timelineLine is a line of a console's timeline file (package serialx).
type timelineLine struct {
	T      time.Time `json:"t"`
	Dir    string    `json:"dir"`
	Off    int64     `json:"off"`
	N      int       `json:"n"`
	Data   string    `json:"data"`
	Hex    string    `json:"hex"`
	Event  string    `json:"event"`
	Detail string    `json:"detail"`
}

// console writes one console of the sequence: its counts over the whole
// timeline, the records at its start and end, the bytes around the steps
// that did not pass, and the expect matches in it. Without a timeline (no
// log folder), tr gives what the runner kept of the console.
func (d *htmlData) console(name, logPath string, tr *results.Transcript) {
	s := d.seq
	d.printf(`{"name":`)
	d.value(name)
	if tr != nil {
		text, trunc := htmlText(tr.Data, htmlConsoleText)
		d.printf(`,"transcript":`)
		d.value(text)
		d.printf(`,"truncated":%d}`, tr.Truncated+int64(trunc))
		return
	}
	d.printf(`,"log":`)
	d.value(filepath.Base(logPath))
	raw, err := os.Open(logPath)
	if err != nil {
		d.printf(`,"error":`)
		d.value(fmt.Sprintf("read the console log: %v", err))
		d.printf(`}`)
		return
	}
	defer raw.Close()
	tlPath := strings.TrimSuffix(logPath, ".log") + ".timeline.jsonl"
	tl, err := os.Open(tlPath)
	if err != nil {
		// The log without its timeline: its text, without times.
		data, _ := io.ReadAll(io.LimitReader(raw, htmlConsoleText+1))
		text, trunc := htmlText(data, htmlConsoleText)
		d.printf(`,"transcript":`)
		d.value(text)
		d.printf(`,"truncated":%d,"error":`, trunc)
		d.value(fmt.Sprintf("read the console timeline: %v", err))
		d.printf(`}`)
		return
	}
	defer tl.Close()

	var (
		tx, rx, events, skipped int
		txBytes, rxBytes        int64
		head                    []*consoleRecord
		ring                    = make([]*consoleRecord, 0, 64)
		ringNext                int
		gap, gapBytes           int
		textBudget              = htmlConsoleText
		curOff                  int64
		windows                 = slices.Clone(s.contexts)
		ctxFrom                 = make([]int64, len(windows))
		ctxTo                   = make([]int64, len(windows))
		started                 = make([]bool, len(windows))
		ended                   = make([]bool, len(windows))
		lo                      int // the first window not ended
	)
	sort.SliceStable(windows, func(a, b int) bool { return windows[a].start < windows[b].start })
	readText := func(off int64, n int) string {
		if textBudget <= 0 {
			return ""
		}
		k := min(n, htmlChunkText, textBudget)
		buf := make([]byte, k)
		m, _ := raw.ReadAt(buf, off)
		text, _ := htmlText(buf[:m], k)
		if m < n {
			text += fmt.Sprintf("…(%d more bytes)", n-m)
		}
		textBudget -= m
		return text
	}
	sc := bufio.NewScanner(tl)
	sc.Buffer(make([]byte, 64<<10), timelineLineMax)
	for {
		if !sc.Scan() {
			if errors.Is(sc.Err(), bufio.ErrTooLong) {
				// Skip the rest of a line too long to show.
				skipped++
				br := bufio.NewReader(tl)
				if _, err := br.ReadBytes('\n'); err != nil {
					break
				}
				sc = bufio.NewScanner(br)
				sc.Buffer(make([]byte, 64<<10), timelineLineMax)
				continue
			}
			break
		}
		var l timelineLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			skipped++
			continue
		}
		at := l.T.Sub(s.startedAt)
		for lo < len(windows) && ended[lo] {
			lo++
		}
		for i := lo; i < len(windows); i++ {
			w := windows[i]
			if !started[i] && at >= w.start {
				started[i], ctxFrom[i] = true, curOff
			}
			if started[i] && !ended[i] && at > w.end {
				ended[i], ctxTo[i] = true, curOff
			}
			if !started[i] {
				break
			}
		}
		r := &consoleRecord{ms: float64(at) / float64(time.Millisecond), dir: l.Dir, off: l.Off, n: l.N}
		switch l.Dir {
		case "tx":
			tx++
			txBytes += int64(l.N)
			// The bytes sent, as text or hex in the timeline, shown with
			// line endings and other control bytes escaped.
			sent := []byte(l.Data)
			if l.Hex != "" {
				if b, err := hex.DecodeString(l.Hex); err == nil {
					sent = b
				}
			}
			r.text = results.QuoteBytes(sent)
		case "rx":
			rx++
			rxBytes += int64(l.N)
			curOff = l.Off + int64(l.N)
		default:
			events++
			r.text = l.Event
			if l.Detail != "" {
				r.text += " " + l.Detail
			}
		}
		if len(head) < htmlHeadRecords {
			if r.dir == "rx" {
				r.text = readText(r.off, r.n)
			}
			head = append(head, r)
			continue
		}
		if len(ring) < htmlTailRecords {
			ring = append(ring, r)
			continue
		}
		old := ring[ringNext]
		gap++
		gapBytes += old.n
		ring[ringNext] = r
		ringNext = (ringNext + 1) % htmlTailRecords
	}
	for i := range windows {
		if !started[i] {
			ctxFrom[i] = curOff
		}
		if !ended[i] {
			ctxTo[i] = curOff
		}
	}
	d.printf(`,"counts":{"tx":%d,"rx":%d,"events":%d,"tx_bytes":%d,"rx_bytes":%d,"unreadable":%d}`, tx, rx, events, txBytes, rxBytes, skipped)
	if err := sc.Err(); err != nil && !errors.Is(err, bufio.ErrTooLong) {
		d.printf(`,"error":`)
		d.value(fmt.Sprintf("read the console timeline: %v", err))
	}
	d.printf(`,"head":`)
	d.value(head)
	tail := append(ring[ringNext:len(ring):len(ring)], ring[:ringNext]...)
	// The tail's texts are read now, from the end back, so that the last
	// bytes before the run ended are shown first when the budget runs out.
	for i := len(tail) - 1; i >= 0; i-- {
		if tail[i].dir == "rx" {
			tail[i].text = readText(tail[i].off, tail[i].n)
		}
	}
	d.printf(`,"gap":{"records":%d,"bytes":%d},"tail":`, gap, gapBytes)
	d.value(tail)
	d.printf(`,"text_left_out":%t,"contexts":[`, textBudget <= 0)
	for i, w := range windows {
		if i > 0 {
			d.printf(",")
		}
		from := max(ctxFrom[i]-htmlContextBefore, 0)
		to := max(ctxTo[i], ctxFrom[i])
		if to-from > htmlContextBytes {
			from = to - htmlContextBytes
		}
		buf := make([]byte, to-from)
		m, _ := raw.ReadAt(buf, from)
		before := int(min(max(ctxFrom[i]-from, 0), int64(m)))
		b1, _ := htmlText(buf[:before], before)
		b2, _ := htmlText(buf[before:m], m-before)
		d.printf(`{"path":`)
		d.value(w.path)
		d.printf(`,"off":%d,"before":`, from)
		d.value(b1)
		d.printf(`,"during":`)
		d.value(b2)
		d.printf(`}`)
	}
	d.printf(`],"expects":[`)
	n := 0
	for _, e := range s.expects {
		if e.Offset+int64(e.Len) > curOff && curOff > 0 {
			continue // not this console's
		}
		if n > 0 {
			d.printf(",")
		}
		n++
		d.printf(`[%d,%d,`, e.Offset, e.Len)
		d.value(e.Path)
		d.printf(`]`)
	}
	d.printf(`]}`)
}

// htmlText turns console bytes into text for the page: valid UTF-8 is
// kept, other bytes and controls other than tab, CR and LF are escaped as
// the other reports do. It returns the text and the bytes left out past max.
func htmlText(b []byte, limit int) (string, int) {
	cut := 0
	if len(b) > limit {
		cut = len(b) - limit
		b = b[:limit]
	}
	var sb strings.Builder
	for len(b) > 0 {
		i := bytes.IndexFunc(b, func(r rune) bool {
			return r == 0xFFFD || (r < 0x20 && r != '\t' && r != '\r' && r != '\n') || r == 0x7f
		})
		if i < 0 {
			sb.Write(b)
			break
		}
		sb.Write(b[:i])
		b = b[i:]
		sb.WriteString(cleanText(string(b[:1])))
		b = b[1:]
	}
	return sb.String(), cut
}
