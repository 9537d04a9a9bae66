package report

import "github.com/hilrun/hilrun/pkg/results"

// htmlRecovery is a climb as the page shows it: the record, with why it
// ran and how it ended in the words of every report.
type htmlRecovery struct {
	results.Recovery
	Why     string `json:"why"`
	Outcome string `json:"outcome"`
}

// benches writes the run's climbs and bad benches into the page's data:
// "recoveries" and "bad_benches", each left out when empty.
func (d *htmlData) benches(b *results.Benches) {
	if len(b.Recoveries) > 0 {
		list := make([]htmlRecovery, len(b.Recoveries))
		for i, r := range b.Recoveries {
			list[i] = htmlRecovery{Recovery: r, Why: r.Why(), Outcome: r.Outcome()}
		}
		d.printf(`,"recoveries":`)
		d.value(list)
	}
	if len(b.Bad) > 0 {
		d.printf(`,"bad_benches":`)
		d.value(b.Bad)
	}
}
