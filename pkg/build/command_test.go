package build

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// recording is a command's output recorded in testdata/outputs: "# "
// header lines naming the tool versions and the command, one of them
// "# exit: N", then the output.
type recording struct {
	header string
	exit   int
	output string
}

func readRecording(t *testing.T, path string) recording {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rec recording
	rest := string(b)
	for strings.HasPrefix(rest, "# ") {
		line, after, _ := strings.Cut(rest, "\n")
		rest = after
		if v, ok := strings.CutPrefix(line, "# exit: "); ok {
			if rec.exit, err = strconv.Atoi(v); err != nil {
				t.Fatalf("%s: exit code %q: %v", path, v, err)
			}
			continue
		}
		rec.header += line + "\n"
	}
	if rec.header == "" {
		t.Fatalf("%s: no header naming the tool versions", path)
	}
	rec.output = rest
	return rec
}

// replay is a Runner that writes recorded output in small pieces, as a
// pipe delivers it, and exits with the recorded code. It checks it was run.
type replay struct {
	t      *testing.T
	output string
	exit   int
	err    error
	calls  [][]string
	envs   [][]string
	dirs   []string
}

var _ Runner = (*replay)(nil)

func newReplay(t *testing.T, output string, exit int, err error) *replay {
	r := &replay{t: t, output: output, exit: exit, err: err}
	t.Cleanup(func() {
		if len(r.calls) == 0 && !t.Failed() {
			t.Error("replay runner was never run")
		}
	})
	return r
}

func (r *replay) Run(ctx context.Context, argv []string, dir string, env []string, out io.Writer) (int, error) {
	r.calls = append(r.calls, argv)
	r.envs = append(r.envs, env)
	r.dirs = append(r.dirs, dir)
	if r.err != nil {
		return -1, r.err
	}
	for s := r.output; s != ""; {
		n := min(len(s), 7)
		if _, err := io.WriteString(out, s[:n]); err != nil {
			return -1, err
		}
		s = s[n:]
	}
	return r.exit, nil
}

// fixedClock returns start, then start plus step on each later call.
func fixedClock(step time.Duration) func() time.Time {
	t := time.Date(2026, 5, 3, 12, 0, 0, 0, time.UTC)
	return func() time.Time {
		now := t
		t = t.Add(step)
		return now
	}
}

// TestRecordedOutputs replays recorded outputs through Command and
// compares each result, as step data, with its golden file.
func TestRecordedOutputs(t *testing.T) {
	paths, err := filepath.Glob("testdata/outputs/*.txt")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no recorded outputs: %v", err)
	}
	wantClass := map[string]Class{
		"gcc_missing_header": MissingHeader,
		"gcc_undefined":      UndefinedReference,
		"gcc_overflow":       MemoryOverflow,
		"gcc_syntax":         SyntaxError,
		"make_no_rule":       Unknown,
		"make_success":       None,
	}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".txt")
		t.Run(name, func(t *testing.T) {
			rec := readRecording(t, path)
			r := newReplay(t, rec.output, rec.exit, nil)
			res, err := Command(context.Background(), CommandSpec{
				Command: []string{"make", "-C", "firmware/sim", "BUILD=/tmp/hilrun-build"},
			}, Options{Runner: r, Now: fixedClock(1500 * time.Millisecond), TailLines: 6})
			if err != nil {
				t.Fatal(err)
			}
			want, ok := wantClass[name]
			if !ok {
				t.Fatalf("no expected class for %s", name)
			}
			if res.Class != want {
				t.Errorf("class = %q, want %q", res.Class, want)
			}
			if res.OK != (rec.exit == 0) {
				t.Errorf("ok = %v with exit code %d", res.OK, rec.exit)
			}
			got, err := json.MarshalIndent(res.Data(), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := filepath.Join("testdata", "golden", name+".json")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			wantJSON, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if string(got) != string(wantJSON) {
				t.Errorf("step data differs from %s (go test -update rewrites it)\ngot:\n%s\nwant:\n%s", golden, got, wantJSON)
			}
		})
	}
}

func TestCommandSpec(t *testing.T) {
	tests := []struct {
		name     string
		spec     CommandSpec
		wantArgv []string
		wantErr  error
	}{
		{
			name:     "argument vector",
			spec:     CommandSpec{Command: []string{"make", "-C", "firmware", "CFLAGS=-O2 -g"}},
			wantArgv: []string{"make", "-C", "firmware", "CFLAGS=-O2 -g"},
		},
		{
			name:     "shell",
			spec:     CommandSpec{Command: []string{"make -C firmware && cp fw.elf out/"}, Shell: true},
			wantArgv: []string{"sh", "-c", "make -C firmware && cp fw.elf out/"},
		},
		{
			name:    "shell in pieces",
			spec:    CommandSpec{Command: []string{"make", "-C"}, Shell: true},
			wantErr: ErrInvalidSpec,
		},
		{
			name:    "empty",
			spec:    CommandSpec{},
			wantErr: ErrInvalidSpec,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r *replay
			if tt.wantErr == nil {
				r = newReplay(t, "", 0, nil)
			}
			opts := Options{}
			if r != nil {
				opts.Runner = r
			} else {
				opts.Runner = failRunner{t}
			}
			tt.spec.Dir, tt.spec.Env = "fw", []string{"V=1"}
			res, err := Command(context.Background(), tt.spec, opts)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr != nil {
				if res != nil {
					t.Errorf("result = %+v, want nil with an error", res)
				}
				return
			}
			if !slices.Equal(r.calls[0], tt.wantArgv) || !slices.Equal(res.Command, tt.wantArgv) {
				t.Errorf("ran %q (result says %q), want %q", r.calls[0], res.Command, tt.wantArgv)
			}
			if r.dirs[0] != "fw" || !slices.Equal(r.envs[0], []string{"V=1"}) {
				t.Errorf("dir %q env %q, want fw [V=1]", r.dirs[0], r.envs[0])
			}
		})
	}
}

// failRunner fails the test when run.
type failRunner struct{ t *testing.T }

func (f failRunner) Run(context.Context, []string, string, []string, io.Writer) (int, error) {
	f.t.Error("runner ran for an invalid spec")
	return -1, nil
}

func TestCommandRunnerErrors(t *testing.T) {
	notFound := &exec.Error{Name: "arm-none-eabi-gcc", Err: exec.ErrNotFound}
	tests := []struct {
		name     string
		argv     []string
		err      error
		wantIs   error
		wantText string
	}{
		{"toolchain missing", []string{"arm-none-eabi-gcc"}, notFound, exec.ErrNotFound, "apt-get install gcc-arm-none-eabi"},
		{"pio missing", []string{"pio", "run"}, &exec.Error{Name: "pio", Err: exec.ErrNotFound}, exec.ErrNotFound, "pipx install platformio"},
		{"other tool missing", []string{"west", "build"}, &exec.Error{Name: "west", Err: exec.ErrNotFound}, exec.ErrNotFound, "west is not installed"},
		{"cancelled", []string{"make"}, fmt.Errorf("run make: %w", context.Canceled), context.Canceled, "run make"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newReplay(t, "", 0, tt.err)
			res, err := Command(context.Background(), CommandSpec{Command: tt.argv}, Options{Runner: r})
			if !errors.Is(err, tt.wantIs) {
				t.Fatalf("err = %v, want it to wrap %v", err, tt.wantIs)
			}
			if !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("err = %q, want it to contain %q", err, tt.wantText)
			}
			if res != nil {
				t.Errorf("result = %+v, want nil", res)
			}
		})
	}
}

func TestCommandELF(t *testing.T) {
	abs, err := filepath.Abs(simELF)
	if err != nil {
		t.Fatal(err)
	}
	berkeley := "   text\t   data\t    bss\t    dec\t    hex\tfilename\n    540\t     24\t   2072\t   2636\t    a4c\tsim.elf\n"
	tests := []struct {
		name        string
		dir, elf    string
		exit        int
		wantOK      bool
		wantClass   Class
		wantSizes   *Sizes
		wantSummary string
	}{
		{
			name: "relative to dir", dir: "../../firmware/sim", elf: "sim.elf", wantOK: true,
			wantSizes:   &Sizes{Text: 540, Data: 24, BSS: 2072, FlashBytes: 564, RAMBytes: 2096, ELF: "../../firmware/sim/sim.elf"},
			wantSummary: "flash 564 bytes, ram 2096 bytes",
		},
		{
			name: "absolute", dir: "elsewhere", elf: abs, wantOK: true,
			wantSizes:   &Sizes{Text: 540, Data: 24, BSS: 2072, FlashBytes: 564, RAMBytes: 2096, ELF: abs},
			wantSummary: "flash 564 bytes, ram 2096 bytes",
		},
		{
			name: "not made", dir: t.TempDir(), elf: "fw.elf", wantOK: false, wantClass: Unknown,
			wantSizes: &Sizes{Text: 540, Data: 24, BSS: 2072, FlashBytes: 564, RAMBytes: 2096},
		},
		{
			name: "failed build reads no elf", dir: "../../firmware/sim", elf: "sim.elf", exit: 2, wantOK: false, wantClass: Unknown,
			wantSizes: &Sizes{Text: 540, Data: 24, BSS: 2072, FlashBytes: 564, RAMBytes: 2096},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newReplay(t, berkeley, tt.exit, nil)
			res, err := Command(context.Background(), CommandSpec{Command: []string{"make"}, Dir: tt.dir, ELF: tt.elf}, Options{Runner: r})
			if err != nil {
				t.Fatal(err)
			}
			if res.OK != tt.wantOK || res.Class != tt.wantClass {
				t.Errorf("ok %v class %q, want %v %q (summary %q)", res.OK, res.Class, tt.wantOK, tt.wantClass, res.Summary)
			}
			if res.Sizes == nil || *res.Sizes != *tt.wantSizes {
				t.Errorf("sizes = %+v, want %+v", res.Sizes, tt.wantSizes)
			}
			if tt.wantSummary != "" && res.Summary != tt.wantSummary {
				t.Errorf("summary = %q, want %q", res.Summary, tt.wantSummary)
			}
		})
	}
}

func TestCommandLogAndProgress(t *testing.T) {
	var out strings.Builder
	for i := range 100 {
		fmt.Fprintf(&out, "line %03d\n", i)
	}
	out.WriteString("no newline at the end")
	logFile := filepath.Join(t.TempDir(), "logs", "build.log")
	var progress []string
	r := newReplay(t, out.String(), 0, nil)
	res, err := Command(context.Background(), CommandSpec{Command: []string{"make"}}, Options{
		Runner:    r,
		LogFile:   logFile,
		Progress:  func(line string) { progress = append(progress, line) },
		TailLines: 3,
	})
	if err != nil {
		t.Fatal(err)
	}
	log, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	if string(log) != out.String() {
		t.Errorf("log file holds %d bytes, want the whole output (%d bytes)", len(log), out.Len())
	}
	if res.LogFile != logFile {
		t.Errorf("LogFile = %q, want %q", res.LogFile, logFile)
	}
	if len(progress) != 101 || progress[0] != "line 000" || progress[100] != "no newline at the end" {
		t.Errorf("progress got %d lines, first %q, last %q", len(progress), progress[0], progress[len(progress)-1])
	}
	if want := "line 098\nline 099\nno newline at the end\n"; res.Tail != want {
		t.Errorf("tail = %q, want %q", res.Tail, want)
	}
}

func TestCommandLogFileUnwritable(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Command(context.Background(), CommandSpec{Command: []string{"make"}}, Options{
		Runner:  failRunner{t},
		LogFile: filepath.Join(file, "build.log"),
	})
	if err == nil || !strings.Contains(err.Error(), "create build log") {
		t.Errorf("err = %v, want a build log error", err)
	}
}

func TestSinkLines(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		want   []string
	}{
		{"lf", []string{"a\nb\n"}, []string{"a", "b"}},
		{"crlf", []string{"a\r\nb\r\n"}, []string{"a", "b"}},
		{"crlf split across writes", []string{"a\r", "\nb\r", "\n"}, []string{"a", "b"}},
		{"progress redraws", []string{"10%\r20%\r", "30%\n"}, []string{"10%", "20%", "30%"}},
		{"lone cr at end of write", []string{"10%\r", "20%\n"}, []string{"10%", "20%"}},
		{"unterminated", []string{"a\nb"}, []string{"a", "b"}},
		{"blank lines", []string{"a\n\nb\n"}, []string{"a", "", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			s := newSink(Options{Progress: func(l string) { got = append(got, l) }})
			for _, w := range tt.writes {
				if _, err := s.Write([]byte(w)); err != nil {
					t.Fatal(err)
				}
			}
			s.flush()
			if !slices.Equal(got, tt.want) {
				t.Errorf("lines = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestTailBounds(t *testing.T) {
	tests := []struct {
		name           string
		maxLines, maxB int
		lines          []string
		want           string
	}{
		{"lines", 2, 100, []string{"a", "b", "c"}, "b\nc\n"},
		{"bytes", 10, 6, []string{"aa", "bb", "cc"}, "bb\ncc\n"},
		{"one huge line", 10, 4, []string{"0123456789"}, "789\n"},
		{"empty", 2, 10, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tl := tail{maxLines: tt.maxLines, maxBytes: tt.maxB}
			for _, l := range tt.lines {
				tl.add(l)
			}
			if got := tl.String(); got != tt.want {
				t.Errorf("tail = %q, want %q", got, tt.want)
			}
		})
	}
}
