package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/hilrun/hilrun/pkg/gate/files"
)

// mergedPage merges the JSON reports at jsons into an HTML page.
func mergedPage(t *testing.T, jsons []string) []byte {
	t.Helper()
	var page bytes.Buffer
	if err := MergeHTML(&page, files.Anywhere(), jsons, HTMLOptions{Info: RunInfo{Version: "v0.9.0-test"}, Now: htmlNow}); err != nil {
		t.Fatal(err)
	}
	return page.Bytes()
}

// TestMergeHTML merges two shards, one with a flaky case and
// measurements, into a page: its sequences with their measurement
// tables, and each measurement over both shards with where each shard's
// values start.
func TestMergeHTML(t *testing.T) {
	jsons, _ := flakyShards(t, t.TempDir())
	data := htmlPageData(t, mergedPage(t, jsons))
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, data, "", " "); err != nil {
		t.Fatalf("the page's data is not JSON: %v", err)
	}
	golden(t, "merge.golden.html.json", append(pretty.Bytes(), '\n'))

	type span struct {
		Label                string
		From, Count, Numbers int
		Min, Max             float64
	}
	var doc struct {
		Passed, Flaky bool
		Merged        []struct {
			File, Shard string
			Sequences   int
		}
		Sequences []struct {
			Name, Status string
			Flaky        bool
			Steps        []struct{ Path string }
			Measurements []struct {
				Name   string
				N      int
				Points [][2]float64
			}
		}
		ShardMeasurements []struct {
			Name   string
			N      int
			Points [][2]float64
			Shards []span
		} `json:"shard_measurements"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Merged) != 2 || doc.Merged[0].Shard != "2/2" || doc.Merged[0].Sequences != 1 || doc.Merged[1].Sequences != 2 {
		t.Errorf("merged reports = %+v, want shard 2/2 with 1 sequence, then shard 1/2 with 2", doc.Merged)
	}
	var names []string
	for _, s := range doc.Sequences {
		names = append(names, s.Name)
	}
	if len(doc.Sequences) != 3 || names[0] != "bench b" || names[2] != "flaky" || !doc.Sequences[2].Flaky {
		t.Fatalf("sequences %v, want bench b, broken and flaky (flaky), by file", names)
	}
	flaky := doc.Sequences[2]
	if len(flaky.Measurements) != 3 || flaky.Measurements[2].Name != "ripple" || flaky.Measurements[2].N != 2 {
		t.Errorf("the flaky sequence's measurements = %+v, want adc, vbat and ripple over its 2 iterations", flaky.Measurements)
	}
	byName := map[string][]span{}
	for _, m := range doc.ShardMeasurements {
		byName[m.Name] = m.Shards
		if len(m.Points) != m.N {
			t.Errorf("%s: %d points of %d values", m.Name, len(m.Points), m.N)
		}
	}
	want := map[string][]span{
		"vbat":   {{Label: "shard 1/2", From: 0, Count: 1, Numbers: 1, Min: 3.29, Max: 3.29}, {Label: "shard 2/2", From: 1, Count: 1, Numbers: 1, Min: 3.31, Max: 3.31}},
		"ripple": {{Label: "shard 1/2", From: 0, Count: 3, Numbers: 3, Min: 14, Max: 19.5}, {Label: "shard 2/2", From: 3, Count: 2, Numbers: 2, Min: 12.5, Max: 13}},
		"adc":    {{Label: "shard 2/2", From: 0, Count: 2, Numbers: 2, Min: 3990, Max: 4020}},
	}
	for name, w := range want {
		got := byName[name]
		if len(got) != len(w) {
			t.Errorf("%s over shards = %+v, want %+v", name, got, w)
			continue
		}
		for i := range w {
			if got[i] != w[i] {
				t.Errorf("%s in %s = %+v, want %+v", name, w[i].Label, got[i], w[i])
			}
		}
	}
}

// TestMergeHTMLChecks checks that the page is refused, as the JSON merge
// is, for a sequence in two reports, and written but incomplete when a
// shard is missing.
func TestMergeHTMLChecks(t *testing.T) {
	dir := t.TempDir()
	jsons, _ := flakyShards(t, dir)
	if err := MergeHTML(&bytes.Buffer{}, files.Anywhere(), []string{jsons[0], jsons[0]}, HTMLOptions{Now: htmlNow}); !errors.Is(err, ErrDuplicate) {
		t.Errorf("one shard twice: %v, want ErrDuplicate", err)
	}
	var page bytes.Buffer
	err := MergeHTML(&page, files.Anywhere(), jsons[:1], HTMLOptions{Now: htmlNow})
	var inc *IncompleteError
	if !errors.As(err, &inc) || len(inc.Missing) != 1 || inc.Missing[0] != "1/2" {
		t.Errorf("shard 1/2 missing: %v, want an IncompleteError naming it", err)
	}
	if !bytes.Contains(htmlPageData(t, page.Bytes()), []byte(`"name":"flaky"`)) {
		t.Error("the incomplete page lacks the sequence it has")
	}
}
