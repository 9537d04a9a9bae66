package report

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/gate/files"
)

// readAllure returns the result files of dir by name, and the names of the
// other files.
func readAllure(t *testing.T, dir string) (map[string][]byte, []string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	res := map[string][]byte{}
	var other []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), "-result.json") {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			res[e.Name()] = b
		} else {
			other = append(other, e.Name())
		}
	}
	sort.Strings(other)
	return res, other
}

func TestAllure(t *testing.T) {
	dir := t.TempDir()
	events, _, _ := htmlFixture(t, dir)
	out := filepath.Join(dir, "allure-results")
	if err := WriteAllure(context.Background(), out, events, AllureOptions{Files: files.Anywhere(), Info: htmlInfo}); err != nil {
		t.Fatal(err)
	}
	res, other := readAllure(t, out)
	names := make([]string, 0, len(res))
	for n := range res {
		names = append(names, n)
	}
	sort.Strings(names)
	var all bytes.Buffer
	byName := map[string]allureResult{}
	for _, n := range names {
		all.WriteString("== " + n + "\n")
		all.Write(res[n])
		var r allureResult
		if err := json.Unmarshal(res[n], &r); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		if r.UUID+"-result.json" != n {
			t.Errorf("%s holds uuid %s", n, r.UUID)
		}
		byName[r.Name] = r
	}
	all.WriteString("== other files\n" + strings.Join(other, "\n") + "\n")
	golden(t, "allure.golden.txt", all.Bytes())

	// One test case per top-level entry, as in JUnit.
	want := map[string]string{"00 send version": "passed", "01 group led": "failed", "02 repeat poll the counter": "passed",
		"03 camera the LED is lit": "passed", "04 build firmware": "passed", "05 send self test": "failed", "06 build broken firmware": "failed", "finally.0 send LED off": "skipped"}
	if len(byName) != len(want) {
		t.Errorf("%d test cases, want %d: %v", len(byName), len(want), names)
	}
	for name, status := range want {
		r, ok := byName[name]
		if !ok {
			t.Errorf("no test case %q", name)
			continue
		}
		if r.Status != status {
			t.Errorf("%s: status %s, want %s", name, r.Status, status)
		}
	}
	led := byName["01 group led"]
	if len(led.Steps) != 2 || led.Steps[1].Status != "failed" || led.StatusDetails == nil || !strings.Contains(led.StatusDetails.Trace, `expected: "led: off"`) {
		t.Errorf("the led group: %+v, want its two steps nested and the failure's expected", led)
	}
	cam := byName["03 camera the LED is lit"]
	if len(cam.Attachments) < 1 || cam.Attachments[0].Type != "image/png" {
		t.Errorf("the camera test case lacks its picture: %+v", cam.Attachments)
	}
	for _, r := range byName {
		for _, a := range r.Attachments {
			if _, err := os.Stat(filepath.Join(out, a.Source)); err != nil {
				t.Errorf("%s: attachment %s: %v", r.Name, a.Source, err)
			}
		}
	}
	// The console bytes of a test case are those received during it.
	fo := byName["05 send self test"]
	found := false
	for _, a := range fo.Attachments {
		if strings.Contains(a.Name, "console console") {
			t.Errorf("attachment %q doubles its word", a.Name)
		}
		if strings.HasPrefix(a.Name, "console") {
			b, _ := os.ReadFile(filepath.Join(out, a.Source))
			found = string(b) == "selftest\r\nHardFault at 0x0800\r\n"
			if !found {
				t.Errorf("the self test's console attachment holds %q", b)
			}
		}
	}
	if !found {
		t.Errorf("the self test has no console attachment: %+v", fo.Attachments)
	}

	// Writing again replaces the same files.
	if err := WriteAllure(context.Background(), out, events, AllureOptions{Files: files.Anywhere(), Info: htmlInfo}); err != nil {
		t.Fatal(err)
	}
	again, other2 := readAllure(t, out)
	if len(again) != len(res) || len(other2) != len(other) {
		t.Errorf("writing again made %d results and %d other files, want %d and %d", len(again), len(other2), len(res), len(other))
	}
}
