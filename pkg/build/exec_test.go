//go:build unix

package build

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/gate/environ"
	"github.com/hilrun/hilrun/pkg/gate/process"
)

const simDir = "../../firmware/sim"

// TestToolchainBuilds builds the virtual board's firmware and its broken
// variants with the real arm-none-eabi toolchain through Command.
func TestToolchainBuilds(t *testing.T) {
	needTool(t, "make")
	needTool(t, "arm-none-eabi-gcc")
	tests := []struct {
		name     string
		target   string // "" builds the image
		class    Class
		position string
		summary  string
	}{
		{name: "image"},
		{
			name: "missing header", target: "broken-missing-header", class: MissingHeader,
			position: "broken/missing_header.c:6:10",
			summary:  "missing header hilrun_missing.h (broken/missing_header.c:6:10)",
		},
		{
			name: "undefined reference", target: "broken-undefined", class: UndefinedReference,
			position: "./broken/undefined.c:12",
			summary:  "./broken/undefined.c:12: undefined reference to `hilrun_undefined_function'",
		},
		{
			name: "overflow", target: "broken-overflow", class: MemoryOverflow,
			summary: "region `RAM' overflowed by 3120 bytes",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tmp := t.TempDir()
			argv := []string{"make", "-C", simDir, "BUILD=" + tmp}
			if tt.target != "" {
				argv = append(argv, tt.target)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			logFile := filepath.Join(tmp, "build.log")
			res, err := Command(ctx, CommandSpec{Command: argv, ELF: filepath.Join(tmp, "sim.elf")}, Options{Runner: hostRunner, LogFile: logFile})
			if err != nil {
				t.Fatal(err)
			}
			if tt.class == None {
				if !res.OK {
					t.Fatalf("build failed: %s\n%s", res.Summary, res.Tail)
				}
				gs := gnuSize(t, filepath.Join(tmp, "sim.elf"))
				s := res.Sizes
				if s == nil || s.Text != gs.Text || s.Data != gs.Data || s.BSS != gs.BSS ||
					s.FlashBytes != gs.Text+gs.Data || s.RAMBytes != gs.Data+gs.BSS || s.ELF == "" {
					t.Errorf("sizes = %+v, arm-none-eabi-size says %+v", s, gs)
				}
				return
			}
			if res.OK || res.ExitCode != 2 {
				t.Fatalf("ok %v exit %d, want a failure with make's exit code 2", res.OK, res.ExitCode)
			}
			if res.Class != tt.class {
				t.Errorf("class = %q, want %q\n%s", res.Class, tt.class, res.Tail)
			}
			if got := res.Diagnostic.Position(); got != tt.position {
				t.Errorf("diagnostic at %q, want %q", got, tt.position)
			}
			if res.Summary != tt.summary {
				t.Errorf("summary = %q, want %q", res.Summary, tt.summary)
			}
			log, err := os.ReadFile(logFile)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(log), "make: Entering directory") {
				t.Errorf("log file lacks make's output:\n%s", log)
			}
		})
	}
}

func TestExecRunnerExitCodes(t *testing.T) {
	tests := []struct {
		name   string
		script string
		want   int
	}{
		{"success", "exit 0", 0},
		{"failure", "exit 3", 3},
		{"signal", "kill -TERM $$", 128 + int(syscall.SIGTERM)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Command(context.Background(), CommandSpec{Command: []string{tt.script}, Shell: true}, Options{Runner: hostRunner})
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != tt.want || res.OK != (tt.want == 0) {
				t.Errorf("exit %d ok %v, want %d", res.ExitCode, res.OK, tt.want)
			}
		})
	}
}

func TestExecRunnerEnvAndDir(t *testing.T) {
	dir := t.TempDir()
	res, err := Command(context.Background(), CommandSpec{
		Command: []string{`echo "$HILRUN_BUILD_TEST $(pwd)"`},
		Shell:   true,
		Dir:     dir,
		Env:     []string{"HILRUN_BUILD_TEST=from-spec"},
	}, Options{Runner: hostRunner})
	if err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(dir)
	if want := "from-spec " + real + "\n"; res.Tail != want {
		t.Errorf("output = %q, want %q", res.Tail, want)
	}
}

func TestExecRunnerNotFound(t *testing.T) {
	_, err := Command(context.Background(), CommandSpec{Command: []string{"hilrun-no-such-tool"}}, Options{Runner: hostRunner})
	if !errors.Is(err, process.ErrNotFound) {
		t.Fatalf("err = %v, want it to wrap process.ErrNotFound", err)
	}
	if !strings.Contains(err.Error(), "hilrun-no-such-tool is not installed") {
		t.Errorf("err = %q, want it to name the tool", err)
	}
}

// TestCancelKillsGroup cancels a command whose shell started a sleep in
// the background and one in the foreground: both must be gone promptly.
func TestCancelKillsGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pids")
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	var once bool
	opts := Options{
		Runner: process.Runner{Policy: hostRunner.Policy, Grace: time.Second},
		Progress: func(line string) {
			if line == "started" && !once {
				once = true
				close(started)
			}
		},
	}
	script := "sleep 30 & echo $! > " + pidFile + "; echo $$ >> " + pidFile + "; echo started; sleep 30"
	type outcome struct {
		res *Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := Command(ctx, CommandSpec{Command: []string{script}, Shell: true}, opts)
		done <- outcome{res, err}
	}()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		cancel()
		t.Fatal("command did not start")
	}
	begin := time.Now()
	cancel()
	var o outcome
	select {
	case o = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("command still running 20s after cancel")
	}
	if took := time.Since(begin); took > 10*time.Second {
		t.Errorf("cancel took %v", took)
	}
	if !errors.Is(o.err, context.Canceled) || o.res != nil {
		t.Errorf("Command = %v, %v; want nil and an error wrapping context.Canceled", o.res, o.err)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		if alive(pid) {
			t.Errorf("process %d outlived the cancel", pid)
		}
	}
}

// alive reports whether pid is a process that has not exited; a zombie
// waiting for its parent has exited.
func alive(pid int) bool {
	deadline := time.Now().Add(10 * time.Second)
	for {
		if syscall.Kill(pid, 0) != nil {
			return false
		}
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err == nil {
			// The state follows the command name in parentheses.
			if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && strings.HasPrefix(string(stat[i+1:]), " Z") {
				return false
			}
		}
		if time.Now().After(deadline) {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCommandRelativeToDir runs a program named by a path relative to Dir,
// as a sequence writes `command: [./build.sh], dir: fw`: it is found in
// Dir, not in hilrun's working directory.
func TestCommandRelativeToDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "build.sh"), []byte("#!/bin/sh\necho built in \"$PWD\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := Command(context.Background(), CommandSpec{Command: []string{"./build.sh"}, Dir: dir}, Options{Runner: hostRunner})
	if err != nil {
		t.Fatalf("Command: %v", err)
	}
	if !res.OK || !strings.Contains(res.Tail, "built in") {
		t.Errorf("OK %v, tail %q", res.OK, res.Tail)
	}
}

// An empty policy environment is an empty environment, not hilrun's own.
func TestRunnerEnviron(t *testing.T) {
	t.Setenv("HILRUN_SECRET_FOR_TEST", "s3cret")
	var out bytes.Buffer
	r := process.Runner{Policy: process.Permit(environ.Of(nil))}
	code, err := r.Run(context.Background(), []string{"/bin/sh", "-c", "echo [$HILRUN_SECRET_FOR_TEST] [$EXTRA]"}, "", []string{"EXTRA=1"}, &out)
	if err != nil || code != 0 || out.String() != "[] [1]\n" {
		t.Errorf("code %d, err %v, output %q", code, err, out.String())
	}
}

// TestNoRunnerRefuses: a build given no runner starts nothing.
func TestNoRunnerRefuses(t *testing.T) {
	_, err := Command(context.Background(), CommandSpec{Command: []string{"true"}}, Options{})
	if !errors.Is(err, process.ErrRefused) {
		t.Fatalf("err = %v, want the process gate's refusal", err)
	}
}

// hostRunner runs programs as the command line does: any program, the
// user's environment.
var hostRunner = process.Runner{Policy: process.Permit(environ.Host())}
