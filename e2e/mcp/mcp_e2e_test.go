//go:build unix

// Package mcpe2e drives hilrun's MCP server end to end with the official
// MCP TypeScript SDK client (client.mjs, run by Node.js) against the virtual
// board, over stdio and over streamable HTTP with a bearer token.
//
// It needs node and this folder's node_modules (npm ci --prefix e2e/mcp).
// Without them the tests skip, except under CI=true where they fail;
// TestHTTPRules, a plain HTTP client, runs without them. The
// tests build hilrun themselves; HILRUN_E2E_BIN=PATH tests that binary
// instead.
package mcpe2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/testenv"
)

const (
	// runTimeout bounds one run of client.mjs; the client's own watchdog
	// (clientTimeout) fires first so that it can say what it was doing.
	runTimeout    = 60 * time.Second
	clientTimeout = 50 * time.Second
	// serverStartTimeout bounds the wait for hilrun mcp --http to listen.
	serverStartTimeout = 20 * time.Second
	// stopGrace is how long a stopped process gets between SIGTERM and SIGKILL.
	stopGrace = 5 * time.Second
)

var (
	buildOnce sync.Once
	buildDir  string
	buildBin  string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// needTool skips the test when something it needs is missing, or fails it
// under CI=true, where a skip would hide a broken setup.
func needTool(t *testing.T, msg string) {
	t.Helper()
	testenv.Missing(t, "%s", msg)
}

// prerequisites checks node and the SDK, then returns hilrunBinary.
func prerequisites(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		needTool(t, "node is not installed: install Node.js 18 or later (Debian: apt-get install nodejs npm), then run: npm ci --prefix e2e/mcp")
	}
	if _, err := os.Stat(filepath.Join("node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		needTool(t, "e2e/mcp/node_modules is missing: run `npm ci --prefix e2e/mcp` from the repository root")
	}
	return hilrunBin(t)
}

// hilrunBin builds hilrun once for the package (or takes HILRUN_E2E_BIN)
// and returns its path.
func hilrunBin(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("HILRUN_E2E_BIN"); bin != "" {
		return bin
	}
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "hilrun-mcp-e2e-")
		if buildErr != nil {
			return
		}
		buildBin = filepath.Join(buildDir, "hilrun")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "build", "-o", buildBin, "github.com/hilrun/hilrun/cmd/hilrun")
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build hilrun: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildBin
}

func randomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// groupCommand makes cmd the leader of a new process group, so that
// everything it starts (hilrun, and what hilrun starts) can be stopped
// together: SIGTERM to the group, then SIGKILL after stopGrace.
func groupCommand(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = stopGrace
}

// markedEnv returns the environment with a marker variable that every
// process started from it inherits, so that leftovers can be found.
func markedEnv(mark string) []string {
	return append(os.Environ(), "HILRUN_E2E_MARK="+mark, "HILRUN_E2E_TIMEOUT_MS="+strconv.Itoa(int(clientTimeout/time.Millisecond)))
}

// checkNoOrphans fails the test if any process still carries the marker in
// its environment a few seconds after everything was stopped. It needs
// /proc (Linux) and does nothing elsewhere.
func checkNoOrphans(t *testing.T, mark string) {
	t.Helper()
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		return
	}
	needle := []byte("HILRUN_E2E_MARK=" + mark + "\x00")
	deadline := time.Now().Add(stopGrace + 2*time.Second)
	for {
		var left []string
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
			if err != nil || !bytes.Contains(env, needle) {
				continue
			}
			if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && isZombie(stat) {
				continue
			}
			cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			left = append(left, fmt.Sprintf("pid %d: %s", pid, strings.ReplaceAll(strings.TrimRight(string(cmdline), "\x00"), "\x00", " ")))
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("processes left running after the test:\n%s", strings.Join(left, "\n"))
			for _, l := range left {
				var pid int
				fmt.Sscanf(l, "pid %d:", &pid)
				if pid > 0 {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// isZombie reports whether a /proc/PID/stat line is of an exited process
// that its parent has not reaped yet.
func isZombie(stat []byte) bool {
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

// summary is the JSON line client.mjs prints last.
type summary struct {
	OK     bool     `json:"ok"`
	Error  string   `json:"error"`
	Checks []string `json:"checks"`
}

// runClient runs node client.mjs with args and fails the test unless it
// reports success.
func runClient(t *testing.T, mark string, args ...string) {
	t.Helper()
	runScript(t, mark, "client.mjs", args...)
}

// runScript runs node script with args and fails the test unless the
// JSON summary it prints last reports success.
func runScript(t *testing.T, mark, script string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	var stdout, stderr testenv.Buffer
	cmd := exec.CommandContext(ctx, "node", append([]string{script}, args...)...)
	cmd.Env = markedEnv(mark)
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	groupCommand(cmd)
	start := time.Now()
	err := cmd.Run()
	// Whatever the client did, nothing it started may outlive it.
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	t.Logf("node %s %s: %s\n%s", script, args[0], time.Since(start).Round(time.Millisecond), stderr.String())
	if ctx.Err() != nil {
		t.Fatalf("node %s %s did not finish within %s\nstdout:\n%s", script, args[0], runTimeout, stdout.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var sum summary
	if jerr := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); jerr != nil {
		t.Fatalf("node %s %s: %v; its last line is not a JSON summary (%v)\nstdout:\n%s", script, args[0], err, jerr, stdout.String())
	}
	if err != nil || !sum.OK {
		t.Fatalf("node %s %s failed (%v): %s\nsummary: %s", script, args[0], err, sum.Error, lines[len(lines)-1])
	}
	t.Logf("passed checks: %s", strings.Join(sum.Checks, "; "))
}

// TestStdio lets the SDK's StdioClientTransport start `hilrun mcp --sim`.
func TestStdio(t *testing.T) {
	bin := prerequisites(t)
	mark := randomHex(t, 8)
	t.Cleanup(func() { checkNoOrphans(t, mark) })
	runClient(t, mark, "stdio", bin)
}

// TestHTTP starts `hilrun mcp --sim --http 127.0.0.1:PORT --token T` and
// connects to it with the SDK's StreamableHTTPClientTransport; the client
// also checks that requests without the token get HTTP 401, that a foreign
// Origin gets 403 and that a session ended with DELETE gets 404.
func TestHTTP(t *testing.T) {
	bin := prerequisites(t)
	mark := randomHex(t, 8)
	token := randomHex(t, 16)
	addr, exited := startHTTP(t, bin, mark, "--sim", "--token", token, "--heartbeat", heartbeat)
	runClient(t, mark, "http", "http://"+addr+"/mcp", token)

	select {
	case err := <-exited:
		exited <- err
		t.Fatalf("hilrun mcp --http exited during the test: %v", err)
	default:
	}
}

// startHTTP starts `hilrun mcp --http 127.0.0.1:PORT ARGS...`, waits until
// it listens and returns its address and a channel that receives its exit.
// The server and everything it started are stopped when the test ends.
func startHTTP(t *testing.T, bin, mark string, args ...string) (string, chan error) {
	t.Helper()
	addr := freeAddr(t)
	var serverOut testenv.Buffer
	cmd := exec.Command(bin, append([]string{"mcp", "--http", addr}, args...)...)
	cmd.Env = markedEnv(mark)
	cmd.Stdout = &serverOut
	cmd.Stderr = &serverOut
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = stopGrace
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		stopGroup(t, cmd.Process.Pid, exited)
		t.Logf("hilrun mcp --http output:\n%s", serverOut.String())
		checkNoOrphans(t, mark)
	})
	if err := waitListening(addr, exited); err != nil {
		t.Fatalf("hilrun mcp --http %s %s: %v\noutput:\n%s", addr, strings.Join(args, " "), err, serverOut.String())
	}
	return addr, exited
}

// stopGroup stops the process group led by pid: SIGTERM, then SIGKILL if
// the leader has not exited within stopGrace, then SIGKILL for whatever is
// left in the group.
func stopGroup(t *testing.T, pid int, exited chan error) {
	t.Helper()
	syscall.Kill(-pid, syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(stopGrace):
		t.Errorf("hilrun mcp did not exit within %s of SIGTERM; killing it", stopGrace)
		syscall.Kill(-pid, syscall.SIGKILL)
		<-exited
	}
	syscall.Kill(-pid, syscall.SIGKILL)
}

// freeAddr returns a loopback address with a port that was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// waitListening waits until addr accepts connections, the server exits, or
// serverStartTimeout passes.
func waitListening(addr string, exited chan error) error {
	deadline := time.Now().Add(serverStartTimeout)
	for {
		c, err := net.DialTimeout("tcp", addr, 500*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case err := <-exited:
			exited <- err
			if err == nil {
				err = errors.New("exit status 0")
			}
			return fmt.Errorf("exited before listening: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not listening after %s: %v", serverStartTimeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
