package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
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
	measures  measureSeries
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

// write writes the data of the run whose sequences are seqs; stopped
// says an interrupt ended a climb of a bench's ladder between them.
func (d *htmlData) write(seqs []results.Sequence, stopped bool, info RunInfo, generated time.Time) error {
	passed, interrupted := len(seqs) > 0 && !stopped, stopped
	for _, s := range seqs {
		passed = passed && s.Status == runner.Passed
		interrupted = interrupted || s.Status == runner.Interrupted
	}
	d.open(passed, interrupted, info, generated)
	var benches results.Benches
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
	z.BenchHooks = benches.Hooks()
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
	d.close(func() { d.benches(&benches) })
	return d.w.err
}

// open starts the data document, up to its list of sequences.
func (d *htmlData) open(passed, interrupted bool, info RunInfo, generated time.Time) {
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
}

// close ends the data document after its sequences; more, when set,
// writes what follows them (",KEY":VALUE...).
func (d *htmlData) close(more ...func()) {
	d.printf(`],"problems":`)
	d.value(append([]string{}, d.readErrs...))
	d.printf(`,"pictures":%d`, len(d.pictures))
	for _, f := range more {
		f()
	}
	d.printf(`}`)
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
	s.measures.add(st)
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
	if seq.Flaky || len(seq.Attempts) > 0 {
		d.printf(`,"flaky":%t,"attempts":`, seq.Flaky)
		d.value(reportAttempts(seq.Attempts))
	}
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
	d.printf(`]`)
	if rows := s.measures.rows(); len(rows) > 0 {
		d.printf(`,"measurements":`)
		d.value(rows)
	}
	d.printf(`,"consoles":[`)
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
