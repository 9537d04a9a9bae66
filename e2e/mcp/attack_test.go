//go:build unix

package mcpe2e

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hilrun/hilrun/pkg/testenv"
)

// attack is one thing a client tries that the server must not let it do.
// Every payload that would act on the host touches a file in the canary
// folder, and the server's environment holds two secrets: after each call
// the folder must be empty and no answer may hold a secret.
type attack struct {
	name string
	tool string
	// args are the tool's arguments as JSON, with {{canary}} (a file in
	// the canary folder), {{root}} (the server's --root) and {{outside}}
	// (a folder outside it) filled in.
	args string
	// want is a text the answer must hold (the refusal); "" when the call
	// may run, as long as it does nothing it should not.
	want string
	// openocd is set for attacks that need the real OpenOCD behind the
	// virtual board (the stand-in speaks no Tcl).
	openocd bool
}

// posture is how a server is started, with the attacks it must withstand.
type posture struct {
	name    string
	flags   []string
	attacks []attack
}

// aliasBomb is a sequence of a few hundred bytes whose vars expand to 9^10
// strings.
var aliasBomb = func() string {
	var b strings.Builder
	b.WriteString("vars:\n  a0: &a0 [x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 10; i++ {
		b.WriteString("  a" + strconv.Itoa(i) + ": &a" + strconv.Itoa(i) + " [")
		for j := 0; j < 9; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a" + strconv.Itoa(i-1))
		}
		b.WriteString("]\n")
	}
	return b.String() + "steps:\n  - delay: 1ms\n"
}()

// exprAttack is a serial_sequence call with a 2 s timeout that sets s to
// 30000 bytes of text and asserts expr.
func exprAttack(expr string) string {
	return jsonArgs(map[string]any{"timeout_ms": 2000, "steps": []any{
		map[string]any{"set": map[string]any{"s": map[string]any{"expr": `repeat("x", 30000)`}}},
		map[string]any{"assert": expr},
	}})
}

func ocdStep(cmd string) string {
	return jsonArgs(map[string]any{"steps": []any{map[string]any{"openocd": cmd}}})
}

func jsonArgs(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// braceImage is an image file name that would end a braced Tcl word and
// run a command that touches a canary (through $HILRUN_E2E_CANARIES, which
// the default posture passes to OpenOCD, as a file name has no slash).
const braceImage = `fw} [exec sh -c {cd "$HILRUN_E2E_CANARIES" && touch brace}] {.bin`

var postures = []posture{
	{name: "default", flags: []string{"--root", "{{root}}", "--pass-env", "HILRUN_E2E_CANARIES", "--max-steps", "20000"}, attacks: []attack{
		{name: "openocd exec", tool: "serial_sequence", args: ocdStep("exec sh -c {touch {{canary}}}"), want: "refused"},
		{name: "exec in echo", tool: "serial_sequence", args: ocdStep("echo [exec touch {{canary}}]"), want: "refused"},
		{name: "exec nested in mdw", tool: "serial_sequence", args: ocdStep("mdw [exec touch {{canary}}]"), want: "refused"},
		{name: "eval", tool: "serial_sequence", args: ocdStep("eval {exec touch {{canary}}}"), want: "refused"},
		{name: "source", tool: "serial_sequence", args: ocdStep("source {{root}}/evil.tcl"), want: "refused"},
		{name: "open", tool: "serial_sequence", args: ocdStep("open {{canary}} w"), want: "refused"},
		{name: "file", tool: "serial_sequence", args: ocdStep("file mkdir {{canary}}"), want: "refused"},
		{name: "socket", tool: "serial_sequence", args: ocdStep("socket stream 127.0.0.1:9"), want: "refused"},
		{name: "env in address", tool: "serial_sequence", args: ocdStep("mdw $::env(HILRUN_MCP_TOKEN)"), want: "refused"},
		{name: "exec after a separator", tool: "serial_sequence", args: ocdStep("mdw 0x20000000; exec touch {{canary}}"), want: "refused"},
		{name: "Tcl in a variable", tool: "serial_sequence",
			args: `{"vars": {"a": "0x20000000 [exec touch {{canary}}]"}, "steps": [{"openocd": "mdw ${a}"}]}`, want: "refused"},
		{name: "Tcl saved from device output", tool: "serial_sequence",
			args: `{"steps": [{"send": "echo [exec touch {{canary}}]", "expect": {"regex": "(\\[exec [^\\]]*\\])"}, "save": ["cmd"]}, {"openocd": "mdw ${cmd}"}]}`, want: "refused"},
		{name: "Tcl in a mem_read address", tool: "mem_read", args: `{"address": "[exec touch {{canary}}]"}`, want: "want a number"},
		{name: "Tcl in a mem_write value", tool: "mem_write", args: `{"address": "0x20000000", "value": "[exec touch {{canary}}]"}`, want: "want a number"},
		{name: "Tcl in a symbol name", tool: "mem_read", args: `{"symbol": "[exec touch {{canary}}]", "elf": "{{root}}/sim.elf"}`, want: "not found"},
		{name: "Tcl in a probe name", tool: "mem_read", args: `{"probe": "[exec touch {{canary}}]", "address": "0x20000000"}`},
		{name: "Tcl in a step's address", tool: "serial_sequence", args: `{"steps": [{"mem_read": true, "address": "[exec touch {{canary}}]"}]}`, want: "invalid"},
		{name: "Tcl in an image name", tool: "upload", args: `{"openocd": {"file": "fw[exec id].bin"}}`},
		{name: "braces in an image name", tool: "upload", args: jsonArgs(map[string]any{"openocd": map[string]any{"file": braceImage}}), want: "evaluates the file name as Tcl again"},
		{name: "env in an image name", tool: "upload", args: `{"openocd": {"file": "fw$::env(HILRUN_MCP_TOKEN).bin"}}`},
		{name: "Tcl in a loaded image name", tool: "upload", args: `{"openocd": {"file": "fw[exec id].bin", "method": "load", "verify": true}}`},
		{name: "build without --allow-exec", tool: "build", args: `{"command": ["sh", "-c", "touch {{canary}}"]}`, want: "--allow-exec"},
		{name: "build step without --allow-exec", tool: "serial_sequence", args: `{"steps": [{"build": {"command": ["sh", "-c", "touch {{canary}}"]}}]}`, want: "--allow-exec"},
		{name: "upload command without --allow-exec", tool: "upload", args: `{"command": ["sh", "-c", "touch {{canary}}"]}`, want: "--allow-exec"},
		{name: "exec without --allow-exec", tool: "serial_sequence", args: `{"steps": [{"exec": ["sh", "-c", "touch {{canary}}"]}]}`, want: "--allow-exec"},
		{name: "launch config outside the root", tool: "run_sequence", args: `{"path": "launch-outside.yaml"}`, want: "refused"},
		{name: "launch config under the root", tool: "run_sequence", args: `{"path": "launch-inside.yaml"}`, want: "--allow-debug-tcl"},
		{name: "launch config climbing out", tool: "run_sequence", args: `{"path": "launch-climb.yaml"}`, want: "refused"},
		// Resource attacks end in an error that names their limit; the
		// next attack is the next call, which must work.
		{name: "YAML alias bomb", tool: "validate_sequence", args: jsonArgs(map[string]any{"content": aliasBomb}), want: "alias expansion limit"},
		{name: "string doubling", tool: "serial_sequence",
			args: `{"vars": {"s": "x"}, "on_failure": "stop", "steps": [{"repeat": {"count": 64}, "steps": [{"set": {"s": "${s}${s}"}}]}]}`, want: "value limit"},
		{name: "expression doubling", tool: "serial_sequence",
			args: `{"vars": {"s": "x"}, "on_failure": "stop", "steps": [{"repeat": {"count": 64}, "steps": [{"set": {"s": {"expr": "s + s"}}}]}]}`, want: "limit"},
		{name: "a huge repeat", tool: "serial_sequence",
			args: `{"steps": [{"repeat": {"count": 50000000}, "steps": [{"set": {"x": 1}}]}]}`, want: "step limit"},
		{name: "nested repeats", tool: "serial_sequence",
			args: `{"steps": [{"repeat": {"count": 1000000}, "steps": [{"repeat": {"count": 1000000}, "steps": [{"set": {"x": 1}}]}]}]}`, want: "100000000"},
		{name: "a repeat bounded by time only", tool: "serial_sequence",
			args: `{"on_failure": "stop", "steps": [{"repeat": {"for": "24h"}, "steps": [{"set": {"x": 1}}]}]}`, want: "step limit"},
		{name: "expression making lists of lists", tool: "serial_sequence", args: exprAttack(`len(map(split(s, ""), {split(s, "")})) > 0`), want: "expression memory budget"},
		{name: "expression looping for ever", tool: "serial_sequence", args: exprAttack(`let l = split(s, ""); all(l, {all(l, {all(l, {true})})})`), want: "expression work budget"},
		{name: "expression listing the environment", tool: "serial_sequence",
			args: `{"steps": [{"set": {"names": {"expr": "join(keys(env), \",\")"}}}, {"assert": "names == \"\""}]}`, want: `"passed":true`},
		{name: "a large anchor aliased in a file", tool: "validate_sequence",
			args: jsonArgs(map[string]any{"content": "vars:\n  big: &b " + strings.Repeat("x", 1<<20) + "\nsteps:\n" + strings.Repeat("  - {send: *b}\n", 3000)}), want: "alias expansion limit"},
		{name: "a large anchor aliased in steps as a string", tool: "serial_sequence",
			args: jsonArgs(map[string]any{"steps": "- {set: {big: &b " + strings.Repeat("x", 1<<20) + "}}\n" + strings.Repeat("- {set: {c: *b}}\n", 4000)}), want: "alias expansion limit"},
		{name: "the next call works", tool: "serial_sequence", args: `{"steps": [{"send": "version", "expect": "hilrun"}]}`, want: `"passed":true`},
		{name: "probes in an inline sequence", tool: "serial_sequence",
			args: `{"steps": {"probes": {"p": {"launch": {"config": ["{{outside}}/evil.cfg"]}}}, "steps": [{"halt": true, "probe": "p"}]}}`, want: "refused"},
	}},
	{name: "read-only with every opt-in", flags: []string{"--root", "{{root}}", "--read-only", "--allow-exec", "--allow-debug-tcl"}, attacks: []attack{
		{name: "build", tool: "build", args: `{"command": ["sh", "-c", "touch {{canary}}"]}`, want: "read-only"},
		{name: "build step", tool: "serial_sequence", args: `{"steps": [{"build": {"command": ["sh", "-c", "touch {{canary}}"]}}]}`, want: "read-only"},
		{name: "exec", tool: "serial_sequence", args: `{"steps": [{"exec": ["sh", "-c", "touch {{canary}}"]}]}`, want: "read-only"},
		{name: "openocd exec", tool: "serial_sequence", args: ocdStep("exec touch {{canary}}"), want: "read-only"},
		{name: "env", tool: "serial_sequence", args: ocdStep("mdw $::env(HILRUN_MCP_TOKEN)"), want: "read-only"},
		{name: "write through a typed command", tool: "serial_sequence", args: ocdStep("mww 0x20000000 1"), want: "read-only"},
		{name: "launch config under the root", tool: "run_sequence", args: `{"path": "launch-inside.yaml"}`, want: "read-only"},
	}},
	{name: "allow-exec", flags: []string{"--root", "{{root}}", "--allow-exec"}, attacks: []attack{
		// These run: what they print must not hold the server's secrets.
		{name: "exec sees no secrets", tool: "serial_sequence",
			args: `{"steps": [{"exec": ["sh", "-c", "echo T=$HILRUN_MCP_TOKEN S=$HILRUN_CANARY_SECRET; env"], "expect": "T= S="}]}`, want: `"status":"passed"`},
		{name: "build sees no secrets", tool: "build", args: `{"command": ["sh", "-c", "echo T=$HILRUN_MCP_TOKEN S=$HILRUN_CANARY_SECRET; env"]}`, want: `"ok":true`},
		{name: "exec through a shell", tool: "serial_sequence", args: `{"steps": [{"exec": "touch {{canary}}", "shell": true}]}`, want: "shell: true"},
		{name: "exec outside the root", tool: "serial_sequence", args: `{"steps": [{"exec": ["touch", "{{canary}}"], "dir": "{{outside}}"}]}`, want: "outside the --root"},
		{name: "raw Tcl still off", tool: "serial_sequence", args: ocdStep("exec touch {{canary}}"), want: "--allow-debug-tcl"},
	}},
	{name: "links out of the root", flags: []string{"--root", "{{root}}", "--allow-exec", "--allow-debug-tcl"}, attacks: []attack{
		// A link inside the root that leads out of it, at each place a
		// path is accepted: every one is refused, naming where it leads.
		{name: "sequence file", tool: "run_sequence", args: `{"path": "link-seq.yaml"}`, want: "outside the --root"},
		{name: "sequence to validate", tool: "validate_sequence", args: `{"path": "link-seq.yaml"}`, want: "outside the --root"},
		{name: "mem_read's ELF", tool: "mem_read", args: `{"symbol": "counter", "elf": "{{root}}/link.elf"}`, want: "outside the --root"},
		{name: "a step's ELF", tool: "serial_sequence", args: `{"steps": [{"mem_read": true, "symbol": "counter", "elf": "{{root}}/link.elf"}]}`, want: "outside the --root"},
		{name: "a probe's ELF in a file", tool: "run_sequence", args: `{"path": "link-probe-elf.yaml"}`, want: "outside the --root"},
		{name: "an upload's image", tool: "upload", args: `{"openocd": {"file": "{{root}}/link-fw.bin"}}`, want: "outside the --root"},
		{name: "an upload step's image", tool: "serial_sequence", args: `{"steps": [{"upload": {"openocd": {"file": "{{root}}/link-fw.bin"}}}]}`, want: "outside the --root"},
		{name: "exec's folder", tool: "serial_sequence", args: `{"steps": [{"exec": ["touch", "{{canary}}"], "dir": "{{root}}/link-dir"}]}`, want: "outside the --root"},
		{name: "build's folder", tool: "build", args: `{"command": ["touch", "{{canary}}"], "dir": "{{root}}/link-dir"}`, want: "outside the --root"},
		{name: "a build step's folder", tool: "serial_sequence", args: `{"steps": [{"build": {"command": ["touch", "{{canary}}"], "dir": "{{root}}/link-dir"}}]}`, want: "outside the --root"},
		{name: "a PlatformIO project", tool: "clean_project", args: `{"project_dir": "{{root}}/link-dir"}`, want: "outside the --root"},
		{name: "a launch config", tool: "run_sequence", args: `{"path": "launch-link.yaml"}`, want: "outside the --root"},
		{name: "a folder link on the way", tool: "run_sequence", args: `{"path": "link-dir/secret.yaml"}`, want: "outside the --root"},
	}},
	{name: "allow-debug-tcl", flags: []string{"--root", "{{root}}", "--allow-debug-tcl"}, attacks: []attack{
		// Raw Tcl is allowed here, but OpenOCD holds none of the server's
		// secrets.
		{name: "token not in OpenOCD's environment", tool: "serial_sequence", args: ocdStep("set ::env(HILRUN_MCP_TOKEN)"), openocd: true},
		{name: "secret not in OpenOCD's environment", tool: "serial_sequence", args: ocdStep("array get ::env"), openocd: true, want: `"status":"passed"`},
		{name: "launch config outside the root", tool: "run_sequence", args: `{"path": "launch-outside.yaml"}`, want: "outside the --root"},
	}},
}

// TestAttacks runs every attack against hilrun mcp --sim over stdio and over
// streamable HTTP, with a fresh server per posture and transport.
func TestAttacks(t *testing.T) {
	bin := hilrunBin(t)
	realOpenOCD := true
	if _, err := exec.LookPath("openocd"); err != nil {
		realOpenOCD = false
		testenv.Missing(t, "openocd is not installed (apt-get install openocd): the Tcl attacks need the real one")
	}
	for _, transportName := range []string{"stdio", "http"} {
		for _, p := range postures {
			t.Run(transportName+"/"+p.name, func(t *testing.T) {
				root, outside, canaries := attackFiles(t)
				fill := strings.NewReplacer("{{root}}", root, "{{outside}}", outside)
				var flags []string
				for _, f := range p.flags {
					flags = append(flags, fill.Replace(f))
				}
				secrets := []string{randomHex(t, 16), randomHex(t, 16)}
				c := startAttacked(t, bin, transportName, flags, secrets, "HILRUN_E2E_CANARIES="+canaries)
				for _, a := range p.attacks {
					if a.openocd && !realOpenOCD {
						continue
					}
					t.Run(a.name, func(t *testing.T) {
						canary := filepath.Join(canaries, strings.ReplaceAll(a.name, " ", "-"))
						args := strings.NewReplacer("{{canary}}", canary, "{{root}}", root, "{{outside}}", outside).Replace(a.args)
						answer := callRaw(t, c, a.tool, args)
						if testing.Verbose() {
							t.Logf("answer: %.600s", answer)
						}
						if a.want != "" && !strings.Contains(answer, a.want) {
							t.Errorf("%s %s: answer lacks %q:\n%s", a.tool, args, a.want, answer)
						}
						for _, s := range secrets {
							if strings.Contains(answer, s) {
								t.Errorf("%s %s: the answer holds a secret of the server's environment:\n%s", a.tool, args, answer)
							}
						}
						if left, _ := os.ReadDir(canaries); len(left) > 0 {
							t.Errorf("%s %s: the payload ran on the host: %s exists", a.tool, args, left[0].Name())
							for _, e := range left {
								os.RemoveAll(filepath.Join(canaries, e.Name()))
							}
						}
						if strings.Contains(answer, "uid=") {
							t.Errorf("%s %s: the answer holds a command's output:\n%s", a.tool, args, answer)
						}
					})
				}
			})
		}
	}
}

// attackFiles makes the server's root (with Tcl and OpenOCD configuration
// files that would touch a canary, sequences that name them, and an ELF
// file), a folder outside it, and the empty canary folder.
func attackFiles(t *testing.T) (root, outside, canaries string) {
	t.Helper()
	base := t.TempDir()
	root, outside, canaries = filepath.Join(base, "root"), filepath.Join(base, "outside"), filepath.Join(base, "canaries")
	for _, d := range []string{root, outside, canaries} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	evil := "exec touch " + filepath.Join(canaries, "tcl-file-ran") + "\n"
	elf, err := os.ReadFile(filepath.Join("..", "..", "firmware", "sim", "sim.elf"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		filepath.Join(root, "evil.tcl"):                       evil,
		filepath.Join(root, "evil.cfg"):                       evil,
		filepath.Join(outside, "evil.cfg"):                    evil,
		filepath.Join(root, "sim.elf"):                        string(elf),
		filepath.Join(root, "fw[exec id].bin"):                "\x00\x00\x00\x00",
		filepath.Join(root, braceImage):                       "\x00\x00\x00\x00",
		filepath.Join(root, "fw$::env(HILRUN_MCP_TOKEN).bin"): "\x00\x00\x00\x00",
		filepath.Join(root, "launch-outside.yaml"):            "probes:\n  p:\n    launch:\n      config: [" + filepath.Join(outside, "evil.cfg") + "]\nsteps:\n  - halt: true\n    probe: p\n",
		filepath.Join(root, "launch-inside.yaml"):             "probes:\n  p:\n    launch:\n      config: [./evil.cfg]\nsteps:\n  - halt: true\n    probe: p\n",
		filepath.Join(root, "launch-climb.yaml"):              "probes:\n  p:\n    launch:\n      config: [interface/../../outside/evil.cfg]\nsteps:\n  - halt: true\n    probe: p\n",
	}
	files[filepath.Join(outside, "secret.yaml")] = "steps:\n  - exec: [touch, " + filepath.Join(canaries, "outside-sequence-ran") + "]\n"
	files[filepath.Join(outside, "sim.elf")] = string(elf)
	files[filepath.Join(outside, "fw.bin")] = "\x00\x00\x00\x00"
	files[filepath.Join(outside, "platformio.ini")] = "[env:x]\nplatform = native\n"
	files[filepath.Join(root, "link-probe-elf.yaml")] = "probes:\n  p: {elf: ./link.elf}\nsteps:\n  - {mem_read: true, symbol: counter, probe: p}\n"
	files[filepath.Join(root, "launch-link.yaml")] = "probes:\n  p:\n    launch:\n      config: [./link.cfg]\nsteps:\n  - halt: true\n    probe: p\n"
	for name, data := range files {
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Links inside the root that lead out of it.
	for link, target := range map[string]string{
		"link-seq.yaml": filepath.Join(outside, "secret.yaml"),
		"link.elf":      filepath.Join(outside, "sim.elf"),
		"link-fw.bin":   filepath.Join(outside, "fw.bin"),
		"link.cfg":      filepath.Join(outside, "evil.cfg"),
		"link-dir":      outside,
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	return root, outside, canaries
}

// startAttacked starts hilrun mcp --sim with flags and the secrets in its
// environment (HILRUN_MCP_TOKEN, HILRUN_CANARY_SECRET), over stdio or over
// HTTP with the token, and returns an initialized client.
func startAttacked(t *testing.T, bin, how string, flags, secrets []string, env ...string) *client.Client {
	t.Helper()
	mark := randomHex(t, 8)
	args := append([]string{"mcp", "--sim"}, flags...)
	addr := ""
	if how == "http" {
		addr = freeAddr(t)
		args = append(args, "--http", addr)
	}
	var serverErr testenv.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Env = append(append(markedEnv(mark), "HILRUN_MCP_TOKEN="+secrets[0], "HILRUN_CANARY_SECRET="+secrets[1]), env...)
	cmd.Stderr = &serverErr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = stopGrace
	var stdin io.WriteCloser
	var stdout io.ReadCloser
	var err error
	if how == "stdio" {
		if stdin, err = cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
		if stdout, err = cmd.StdoutPipe(); err != nil {
			t.Fatal(err)
		}
	} else {
		cmd.Stdout = &serverErr
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		stopGroup(t, cmd.Process.Pid, exited)
		if t.Failed() {
			t.Logf("hilrun mcp output:\n%s", serverErr.String())
		}
		checkNoOrphans(t, mark)
	})
	var c *client.Client
	if how == "stdio" {
		c = client.NewClient(transport.NewIO(stdout, stdin, io.NopCloser(strings.NewReader(""))))
	} else {
		if err := waitListening(addr, exited); err != nil {
			t.Fatalf("hilrun mcp --http %s: %v\noutput:\n%s", addr, err, serverErr.String())
		}
		if c, err = client.NewStreamableHttpClient("http://"+addr+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + secrets[0]})); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "attacker", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatalf("initialize: %v\noutput:\n%s", err, serverErr.String())
	}
	return c
}

// callRaw calls tool with args (JSON) and returns the whole answer as JSON
// text: a protocol error's message, or the result with its content and
// structured content.
func callRaw(t *testing.T, c *client.Client, tool, args string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(args), &m); err != nil {
		t.Fatalf("arguments %s: %v", args, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	var req mcp.CallToolRequest
	req.Params.Name = tool
	req.Params.Arguments = m
	started := time.Now()
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return "protocol error: " + err.Error()
	}
	b, _ := json.Marshal(res)
	if time.Since(started) > runTimeout {
		t.Errorf("%s took %s", tool, time.Since(started))
	}
	return string(b)
}
