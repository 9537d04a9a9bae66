package cli_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/sim"
	"github.com/hilrun/hilrun/pkg/testenv"
)

// poolSequences writes n sequences for a pool run into dir: copies of the
// virtual board's stream sequence (100000 bytes at full speed, twice), and
// every fourth one a sequence that fails an assert.
func poolSequences(t *testing.T, dir string, n int) (names []string, failing map[string]bool) {
	t.Helper()
	failing = map[string]bool{}
	stream, err := os.ReadFile("../../sequences/sim/stream.yaml")
	if err != nil {
		t.Fatal(err)
	}
	crash := []byte("name: x\nsteps:\n  - {send: \"\", expect: \"sim> \"}\n  - {send: echo hello, expect: hello}\n  - assert: 1 == 2\n    message: this sequence fails on purpose\n")
	nameRE := regexp.MustCompile(`(?m)^name: .*$`)
	schemaRE := regexp.MustCompile(`(?m)^# yaml-language-server.*$`)
	for i := range n {
		src, name := stream, fmt.Sprintf("stream-%d", i+1)
		if i%4 == 3 {
			src, name = crash, fmt.Sprintf("crash-%d", i+1)
			failing[name] = true
		}
		out := nameRE.ReplaceAll(schemaRE.ReplaceAll(src, nil), []byte("name: "+name))
		writeFile(t, dir, fmt.Sprintf("%02d-%s.yaml", i+1, name), string(out))
		names = append(names, name)
	}
	return names, failing
}

type poolReport struct {
	Sequences []struct {
		Name   string            `json:"name"`
		Bench  string            `json:"bench"`
		Status string            `json:"status"`
		Logs   map[string]string `json:"logs"`
	} `json:"sequences"`
}

// A pool of 8 virtual boards runs 8 sequences with -j 8 and with -j 1:
// the same results; with -j 8 every bench runs one; every console log is
// byte for byte the same as in the run one at a time, and whole; every
// console line carries its bench and no sequence's lines mix with another's
// on its bench.
func TestPoolEightVirtualBoards(t *testing.T) {
	dir := t.TempDir()
	seqDir := filepath.Join(dir, "seqs")
	if err := os.Mkdir(seqDir, 0o755); err != nil {
		t.Fatal(err)
	}
	names, failing := poolSequences(t, seqDir, 8)
	var pool strings.Builder
	pool.WriteString("benches:\n")
	var benches []string
	for i := range 8 {
		benches = append(benches, fmt.Sprintf("b%d", i+1))
		fmt.Fprintf(&pool, "  - {name: b%d, sim: true}\n", i+1)
	}
	poolFile := writeFile(t, dir, "lab.pool.yaml", pool.String())
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())

	run := func(jobs int) (poolReport, string, string) {
		logs := filepath.Join(dir, fmt.Sprintf("logs-j%d", jobs))
		jsonPath := filepath.Join(dir, fmt.Sprintf("j%d.json", jobs))
		code, stdout, stderr := hilrun("run", "--pool", poolFile, "-j", fmt.Sprint(jobs), "--log-dir", logs, "--json", jsonPath, "--junit", jsonPath+".xml", seqDir)
		if code != 1 {
			t.Fatalf("-j %d: exit %d, want 1 (a sequence fails); stderr:\n%s\nstdout:\n%s", jobs, code, stderr, stdout)
		}
		var rep poolReport
		data, err := os.ReadFile(jsonPath)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &rep); err != nil {
			t.Fatal(err)
		}
		junit, err := os.ReadFile(jsonPath + ".xml")
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(junit), `<property name="bench" value="b`); n != len(names) {
			t.Errorf("-j %d: the JUnit report names a bench %d times, want %d", jobs, n, len(names))
		}
		return rep, stdout, logs
	}
	rep8, out8, _ := run(8)
	rep1, _, _ := run(1)

	logsOf := func(rep poolReport, jobs int) map[string][]byte {
		t.Helper()
		got := map[string][]byte{}
		used := map[string]bool{}
		if len(rep.Sequences) != len(names) {
			t.Fatalf("-j %d: %d sequences in the report, want %d", jobs, len(rep.Sequences), len(names))
		}
		for i, s := range rep.Sequences {
			if s.Name != names[i] {
				t.Errorf("-j %d: sequence %d in the report is %s, want %s (the order given)", jobs, i, s.Name, names[i])
			}
			want := "passed"
			if failing[s.Name] {
				want = "failed"
			}
			if s.Status != want {
				t.Errorf("-j %d: %s %s, want %s", jobs, s.Name, s.Status, want)
			}
			if !slices.Contains(benches, s.Bench) {
				t.Errorf("-j %d: %s ran on bench %q", jobs, s.Name, s.Bench)
			}
			used[s.Bench] = true
			path := s.Logs["console"]
			if !strings.Contains(path, string(filepath.Separator)+"20") || !strings.Contains(path, "-"+s.Bench+string(filepath.Separator)) {
				t.Errorf("-j %d: %s's log %s is not in its bench's folder", jobs, s.Name, path)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			checkWholeLog(t, path, data)
			got[s.Name] = data
		}
		if jobs == 8 && len(used) != 8 {
			t.Errorf("-j 8 used benches %v, want all 8", used)
		}
		if jobs == 1 && len(used) != 8 {
			// One at a time, each on the bench used least recently.
			t.Errorf("-j 1 used benches %v, want all 8 in turn", used)
		}
		return got
	}
	logs8, logs1 := logsOf(rep8, 8), logsOf(rep1, 1)
	// With -j 8 each sequence ran on a fresh board, as it does alone with
	// --sim: its log is the same, byte for byte.
	files, err := filepath.Glob(filepath.Join(seqDir, "*.yaml"))
	if err != nil || len(files) != len(names) {
		t.Fatalf("%v, %v", files, err)
	}
	for i, file := range files {
		name := names[i]
		logs := filepath.Join(dir, "alone", name)
		hilrun("run", "--sim", "--log-dir", logs, file)
		alone, err := filepath.Glob(filepath.Join(logs, "*", "console.log"))
		if err != nil || len(alone) != 1 {
			t.Fatalf("%s alone: logs %v, %v", name, alone, err)
		}
		want, err := os.ReadFile(alone[0])
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(logs8[name], want) {
			t.Errorf("%s: the console log with -j 8 (%d bytes) differs from the sequence's alone (%d bytes)", name, len(logs8[name]), len(want))
		}
		for j, logs := range []map[string][]byte{logs8, logs1} {
			if !failing[name] && bytes.Count(logs[name], []byte("00001562 CDEFGHIJKLMNOPQRSTUVWXY\r\n")) != 2 {
				t.Errorf("%s (run %d): the log lacks the end of the two streams", name, j)
			}
		}
	}
	checkPrefixedLines(t, out8, benches, names)
	for _, name := range names {
		if !regexp.MustCompile(`(?m)^  [✓✗] ` + name + ` \(.*\) [0-9.]+s on b[1-8]\b`).MatchString(out8) {
			t.Errorf("the summary does not say which bench ran %s:\n%s", name, out8)
		}
	}
}

// checkWholeLog checks a console log against its timeline: every byte
// received is in it, in order, and nothing else.
func checkWholeLog(t *testing.T, path string, data []byte) {
	t.Helper()
	f, err := os.Open(strings.TrimSuffix(path, ".log") + ".timeline.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var next int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e struct {
			Dir string `json:"dir"`
			Off int64  `json:"off"`
			N   int64  `json:"n"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		if e.Dir != "rx" {
			continue
		}
		if e.Off != next {
			t.Errorf("%s: the timeline jumps from %d to %d", path, next, e.Off)
		}
		next = e.Off + e.N
	}
	if next != int64(len(data)) {
		t.Errorf("%s: %d bytes, the timeline received %d", path, len(data), next)
	}
}

// checkPrefixedLines checks the progress of a pool run: up to the summary,
// every line starts with one bench's prefix, once; on each bench, a
// sequence's lines run from its header to its verdict with no other
// sequence's header between them.
func checkPrefixedLines(t *testing.T, out string, benches, names []string) {
	t.Helper()
	prefixRE := regexp.MustCompile(`^\[(b\d+)\] `)
	open := map[string]string{} // bench -> sequence running
	done := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "FAILED ") || strings.HasPrefix(line, "PASSED ") {
			break // the summary
		}
		if line == "" {
			continue
		}
		m := prefixRE.FindStringSubmatch(line)
		if m == nil || !slices.Contains(benches, m[1]) {
			t.Errorf("a line without a bench prefix: %q", line)
			continue
		}
		rest := line[len(m[0]):]
		if prefixRE.MatchString(rest) || strings.Contains(rest, "] ▶") {
			t.Errorf("two lines in one: %q", line)
		}
		bench := m[1]
		for _, name := range names {
			switch {
			case strings.HasPrefix(rest, "▶ "+name+" "):
				if open[bench] != "" {
					t.Errorf("bench %s starts %s while %s runs", bench, name, open[bench])
				}
				open[bench] = name
			case strings.HasPrefix(rest, "PASSED "+name+":") || strings.HasPrefix(rest, "FAILED "+name+":"):
				if open[bench] != name {
					t.Errorf("bench %s ends %s while %q runs", bench, name, open[bench])
				}
				open[bench] = ""
				done[name] = true
			}
		}
	}
	for _, name := range names {
		if !done[name] {
			t.Errorf("no verdict line for %s in:\n%s", name, out)
		}
	}
}

// A second hilrun on the same host finds the pool's only bench held by
// the first: with --pool-busy skip it runs nothing and says who holds it
// (exit 3); by default it waits, and runs once the first lets go.
func TestPoolBusyBenchAcrossProcesses(t *testing.T) {
	b := sim.New(sim.Options{})
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	bin := hilrunBinary(t)
	dir := t.TempDir()
	started, gate := filepath.Join(dir, "started"), filepath.Join(dir, "gate")
	poolFile := writeFile(t, dir, "lab.pool.yaml", "benches:\n  - name: only\n    devices: {console: "+b.SerialPath()+"}\n")
	holder := writeFile(t, dir, "hold.yaml", `
name: hold
devices: {console: }
steps:
  - exec: [sh, -c, "touch '`+started+`'; until [ -e '`+gate+`' ]; do sleep 0.01; done"]
    timeout: 120s
`)
	second := writeFile(t, dir, "second.yaml", "name: second\ndevices: {console: }\nsteps:\n  - {send: echo two, expect: two}\n")
	env := append(os.Environ(), "XDG_RUNTIME_DIR="+t.TempDir())

	first := exec.Command(bin, "run", "--pool", poolFile, holder)
	first.Env = env
	var firstOut bytes.Buffer
	first.Stdout, first.Stderr = &firstOut, &firstOut
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	defer first.Process.Kill()
	waitForFile(t, started, first)

	skip := exec.Command(bin, "run", "--pool", poolFile, "--pool-busy", "skip", second)
	skip.Env = env
	out, err := skip.CombinedOutput()
	if code := exitCode(err); code != 3 || !strings.Contains(string(out), "bench only is busy, skipped") || !strings.Contains(string(out), fmt.Sprintf("held by process %d", first.Process.Pid)) {
		t.Errorf("--pool-busy skip: exit %d, output:\n%s", code, out)
	}

	wait := exec.Command(bin, "run", "--pool", poolFile, second)
	wait.Env = env
	var waitOut testenv.Buffer
	wait.Stdout, wait.Stderr = &waitOut, &waitOut
	if err := wait.Start(); err != nil {
		t.Fatal(err)
	}
	defer wait.Process.Kill()
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(waitOut.String(), "bench only is busy, waiting") {
		if time.Now().After(deadline) {
			t.Fatalf("the second run did not say it waits:\n%s", waitOut.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := first.Wait(); err != nil {
		t.Errorf("first run: %v\n%s", err, firstOut.String())
	}
	if err := wait.Wait(); err != nil || !strings.Contains(waitOut.String(), "[only] PASSED second") {
		t.Errorf("the waiting run: %v\n%s", err, waitOut.String())
	}

	// A run killed while it holds the bench leaves it free: the kernel
	// drops its lock.
	if err := os.Remove(gate); err != nil {
		t.Fatal(err)
	}
	os.Remove(started)
	killed := exec.Command(bin, "run", "--pool", poolFile, holder)
	killed.Env = env
	if err := killed.Start(); err != nil {
		t.Fatal(err)
	}
	defer os.WriteFile(gate, nil, 0o644) // lets the orphaned shell go
	waitForFile(t, started, killed)
	if err := killed.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed.Wait()
	after := exec.Command(bin, "run", "--pool", poolFile, "--pool-busy", "skip", second)
	after.Env = env
	if out, err := after.CombinedOutput(); err != nil || !strings.Contains(string(out), "[only] PASSED second") {
		t.Errorf("after the holder was killed: %v\n%s", err, out)
	}
}

func waitForFile(t *testing.T, path string, cmd *exec.Cmd) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if cmd.ProcessState != nil || time.Now().After(deadline) {
			t.Fatalf("%s never appeared", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// What a pool run refuses before anything opens, as invalid input (exit
// 2), and --pool-fail-fast, which starts nothing after a failure.
func TestPoolRefusesAndFailsFast(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	simPool := writeFile(t, dir, "sim.pool.yaml", "benches:\n  - {name: one, sim: true}\n")
	seq := writeFile(t, dir, "ok.yaml", "name: ok\nsteps:\n  - {send: echo hi, expect: hi}\n")
	twoDevices := writeFile(t, dir, "two.yaml", "name: two\ndevices: {console: , aux: }\nsteps:\n  - {send: echo hi, expect: hi, to: console}\n")
	realPool := writeFile(t, dir, "real.pool.yaml", "benches:\n  - name: left\n    devices: {console: /dev/ttyACM0}\n")
	badPool := writeFile(t, dir, "bad.pool.yaml", "benches:\n  - name: a\n    sim: true\n  - name: a\n    sim: true\n")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"port with pool", []string{"run", "--pool", simPool, "--port", "/dev/ttyACM0", seq}, "--pool binds each sequence to a bench of the pool: --port cannot be given with it"},
		{"sim with pool", []string{"run", "--pool", simPool, "--sim", seq}, "--sim cannot be given with it"},
		{"jobs without pool", []string{"run", "-j", "2", seq}, "give --pool FILE"},
		{"busy", []string{"run", "--pool", simPool, "--pool-busy", "never", seq}, `--pool-busy "never": want wait or skip`},
		{"pool file", []string{"run", "--pool", badPool, seq}, `bad.pool.yaml:4:11: bench name "a" is given twice`},
		{"unbound device", []string{"run", "--pool", realPool, twoDevices}, "two.yaml: device aux has no port: bind it in the pool file's bench (on bench left)"},
		{"validate unbound device", []string{"validate", "--pool", realPool, twoDevices}, "two.yaml: device aux has no port: bind it in the pool file's bench (on bench left)"},
		{"validate pool file", []string{"validate", badPool}, `bench name "a" is given twice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := hilrun(tc.args...)
			if code != 2 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant %q", code, stderr, tc.want)
			}
		})
	}

	if code, stdout, stderr := hilrun("validate", "--pool", realPool, simPool, seq); code != 0 || !strings.Contains(stdout, "sim.pool.yaml: ok (pool: 1 bench)") || !strings.Contains(stdout, "ok.yaml: ok (ok, 1 step)") {
		t.Errorf("validate --pool: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if code, stdout, _ := hilrun("schema", "--pool"); code != 0 || !strings.Contains(stdout, `"title": "hilrun pool file"`) {
		t.Errorf("schema --pool: exit %d\n%s", code, stdout)
	}

	fail := writeFile(t, dir, "a-fail.yaml", "name: fail\nsteps:\n  - assert: 1 == 2\n")
	code, stdout, stderr := hilrun("run", "--pool", simPool, "--pool-fail-fast", fail, seq)
	if code != 1 || strings.Contains(stdout, "▶ ok") || !strings.Contains(stderr, "1 sequence not run (a sequence did not pass and --pool-fail-fast is set)") {
		t.Errorf("--pool-fail-fast: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	code, stdout, _ = hilrun("run", "--pool", simPool, fail, seq)
	if code != 1 || !strings.Contains(stdout, "[one] PASSED ok") {
		t.Errorf("without --pool-fail-fast: exit %d\nstdout:\n%s", code, stdout)
	}
}
