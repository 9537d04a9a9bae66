package report

import (
	"crypto/md5"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
)

// writeRecoveries writes a test case per climb of a bench's recovery
// ladder, in the suite "bench NAME: recovery": passed when the bench came
// back, broken when it did not (the bench is bad, which its status
// details say) or the run was interrupted during the climb. Its steps are
// the health check first and each rung, with the check after it.
func (a *allureWriter) writeRecoveries(b *results.Benches) {
	_, _, bad := b.ByBench()
	for i := range b.Recoveries {
		if a.err != nil {
			return
		}
		r := &b.Recoveries[i]
		start := r.StartedAt.UnixMilli()
		res := &allureResult{Name: recoveryName(r), Status: "passed", Stage: "finished",
			Start: start, Stop: start + int64(r.DurationMS.D()/time.Millisecond),
			Description: cleanLine(r.Why()), Steps: []*allureStep{}, Attachments: []allureAttach{}}
		if !r.Recovered {
			res.Status = "broken"
			msg := cleanLine(r.Outcome())
			if why := bad[r.Bench]; why != "" && !r.Interrupted {
				msg += "; bench " + cleanLine(r.Bench) + " is bad: it took no more work: " + cleanLine(why)
			}
			res.StatusDetails = &allureDetails{Message: msg}
		}
		at := r.StartedAt
		if c := r.Check; c != nil {
			res.Steps = append(res.Steps, checkStep("health check", c, &at))
		}
		for _, g := range r.Rungs {
			st := checkStep(fmt.Sprintf("rung %d %s", g.Index, cleanLine(g.Label)), &g.Check, &at)
			if loc := locationOf(g.File, g.Line, g.Column, ""); loc != "" {
				st.Parameters = append(st.Parameters, allureParameter{Name: "at", Value: loc})
			}
			st.Steps = append(st.Steps, checkStep("health check", &g.Health, &at))
			res.Steps = append(res.Steps, st)
		}
		a.writeRecovery(res, r, i)
	}
}

// recoveryName names a climb's test case: "recovery before boot.yaml".
func recoveryName(r *results.Recovery) string {
	where := "before"
	if r.Trigger == results.TriggerError {
		where = "after"
	}
	return "recovery " + where + " " + cleanLine(r.Sequence)
}

// checkStep is one run of a ladder as an Allure step, starting at *at,
// which it moves to its end.
func checkStep(name string, c *results.Check, at *time.Time) *allureStep {
	start := *at
	*at = start.Add(c.DurationMS.D())
	st := &allureStep{Name: name, Status: allureStatus(c.Status), Stage: "finished",
		Start: start.UnixMilli(), Stop: at.UnixMilli(), Steps: []*allureStep{}, Attachments: []allureAttach{}}
	if c.Status != runner.Passed && c.Message != "" {
		st.StatusDetails = &allureDetails{Message: cleanLine(c.Message)}
	}
	return st
}

// writeRecovery gives a climb's test case its ids and labels, and writes
// it.
func (a *allureWriter) writeRecovery(r *allureResult, rec *results.Recovery, i int) {
	suite := "bench " + cleanLine(rec.Bench) + ": recovery"
	r.FullName = suite + "#" + r.Name
	id := sha1.Sum([]byte(fmt.Sprintf("recovery\x00%d\x00%s\x00%s", i, r.FullName, rec.StartedAt.Format(time.RFC3339Nano))))
	r.UUID = uuidOf(id[:16])
	hist := md5.Sum([]byte(r.FullName))
	r.HistoryID = hex.EncodeToString(hist[:])
	r.TestCaseID = r.HistoryID
	r.Labels = []allureLabel{
		{Name: "parentSuite", Value: "hilrun"},
		{Name: "suite", Value: suite},
		{Name: "framework", Value: "hilrun"},
	}
	if v := a.opts.Info.Version; v != "" {
		r.Parameters = append(r.Parameters, allureParameter{Name: "hilrun", Value: v})
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		a.err = err
		return
	}
	path := filepath.Join(a.dir, r.UUID+"-result.json")
	if err := a.opts.Files.WriteFile(path+".tmp", append(b, '\n'), 0o666); err != nil {
		a.err = err
		return
	}
	a.err = os.Rename(path+".tmp", path)
}
