//go:build unix

package mcpe2e

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creack/pty"
)

// edgeAttack is an attack on a part of a request that the earlier checks
// never walked: a camera's ffmpeg input and arguments, a probe address in a
// file, a typed command that writes a register.
type edgeAttack struct {
	name, tool string
	// args is the tool's arguments as JSON, with the placeholders of
	// edgeFiles filled in.
	args string
	// want is a text the answer must hold; allowed, when true, says the
	// answer must not hold "refused" (the server's own camera).
	want    string
	allowed bool
}

// edgeTargets are what the attacks aim at, outside the server: a local
// service that counts the connections it gets, and a pseudo-terminal whose
// peer counts the bytes written to it.
type edgeTargets struct {
	web     string
	webHits atomic.Int64
	pty     string
	ptyIn   atomic.Int64
}

func newEdgeTargets(t *testing.T) *edgeTargets {
	t.Helper()
	tg := &edgeTargets{}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	tg.web = l.Addr().String()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			tg.webHits.Add(1)
			c.Close()
		}
	}()
	master, slave, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { master.Close(); slave.Close() })
	tg.pty = slave.Name()
	go func() {
		b := make([]byte, 512)
		for {
			n, err := master.Read(b)
			tg.ptyIn.Add(int64(n))
			if err != nil {
				return
			}
		}
	}()
	return tg
}

// edgeFiles writes the sequence and bench files the attacks name under
// root, and returns the replacer of the placeholders: {{root}},
// {{outside}}, {{web}} (the counting service), {{pty}}.
func edgeFiles(t *testing.T, root, outside string, tg *edgeTargets) *strings.Replacer {
	t.Helper()
	fill := strings.NewReplacer("{{root}}", root, "{{outside}}", outside, "{{web}}", tg.web, "{{pty}}", tg.pty)
	halt := "timeout: 5s\nsteps:\n  - halt: true\n    probe: p\n"
	capture := "steps:\n  - capture: {camera: top}\n"
	files := map[string]string{
		"camera-environ.yaml":            "cameras:\n  top: {input: /proc/self/environ, format: rawvideo, args: [-pixel_format, gray, -video_size, 16x16]}\n" + capture,
		"camera-url.yaml":                "cameras:\n  top: 'http://{{web}}/file'\n" + capture,
		"camera-bench/hilrun.bench.yaml": "cameras:\n  top: {input: 'http://{{web}}/bench'}\n",
		"camera-bench/seq.yaml":          capture,
		"probe-gdb.yaml":                 "probes:\n  p: {gdb: '{{web}}'}\n" + halt,
		"probe-openocd.yaml":             "probes:\n  p: {openocd: '{{web}}'}\n" + halt,
		"probe-pty.yaml":                 "probes:\n  p: {gdb: '{{pty}}'}\n" + halt,
		"probe-link.yaml":                "probes:\n  p: {gdb: '{{root}}/pty-link'}\n" + halt,
		"probe-bench/hilrun.bench.yaml":  "probes:\n  p: {gdb: '{{web}}'}\n",
		"probe-bench/seq.yaml":           halt,
		"probe-through-bench.yaml":       "probes:\n  q: {gdb: '{{web}}'}\ntimeout: 5s\nsteps:\n  - halt: true\n    probe: q\n",
		"camera-beside-bench.yaml":       "cameras:\n  top: {input: 'http://{{web}}/beside'}\n" + capture,
	}
	for name, data := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(fill.Replace(data)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A link inside the root that leads out of it, to the pty.
	if err := os.Symlink(tg.pty, filepath.Join(root, "pty-link")); err != nil {
		t.Fatal(err)
	}
	// The operator's bench: a camera, and a probe that gives no address.
	bench := "cameras:\n  top: {input: /dev/video99}\nprobes:\n  q: {elf: " + filepath.Join(root, "sim.elf") + "}\n"
	if err := os.WriteFile(filepath.Join(outside, "operator.bench.yaml"), []byte(bench), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.raw"), []byte(strings.Repeat("secret", 64)), 0o644); err != nil {
		t.Fatal(err)
	}
	return fill
}

// cameraSteps is serial_sequence's steps as a mapping with a cameras
// section and a capture from camera.
func cameraSteps(camera map[string]any) string {
	return jsonArgs(map[string]any{"steps": map[string]any{
		"cameras": map[string]any{"evil": camera},
		"steps":   []any{map[string]any{"capture": map[string]any{"camera": "evil"}}},
	}})
}

// edgePostures are the servers the edge attacks run against, each over
// stdio and HTTP.
func edgePostures() []struct {
	name    string
	flags   []string
	attacks []edgeAttack
} {
	cameras := []edgeAttack{
		{name: "camera args write a file", tool: "serial_sequence", want: "refused",
			args: cameraSteps(map[string]any{"input": "color=c=red:s=8x8", "format": "lavfi",
				"args": []any{"-f", "lavfi", "-i", "color=c=red:s=8x8", "-frames:v", "1", "-y", "{{canary}}.png", "-f", "lavfi"}})},
		{name: "camera reads a host file as pixels", tool: "serial_sequence", want: "refused",
			args: cameraSteps(map[string]any{"input": "{{outside}}/secret.raw", "format": "rawvideo", "args": []any{"-pixel_format", "gray", "-video_size", "16x16"}})},
		{name: "camera reads the server's environment", tool: "serial_sequence", want: "refused",
			args: cameraSteps(map[string]any{"input": "/proc/self/environ", "format": "rawvideo", "args": []any{"-pixel_format", "gray", "-video_size", "16x16"}})},
		{name: "camera fetches a URL", tool: "serial_sequence", want: "refused",
			args: cameraSteps(map[string]any{"input": "http://{{web}}/steps"})},
		{name: "camera format only", tool: "serial_sequence", want: "refused",
			args: cameraSteps(map[string]any{"format": "lavfi"})},
		{name: "camera in a YAML string", tool: "serial_sequence", want: "refused",
			args: jsonArgs(map[string]any{"steps": "cameras:\n  evil: {input: 'http://{{web}}/yaml'}\nsteps:\n  - capture: {camera: evil}\n"})},
		{name: "camera named by URL in a step", tool: "serial_sequence", want: "refused",
			args: `{"steps": [{"capture": {"camera": "http://{{web}}/step"}}]}`},
		{name: "camera in a file under the root", tool: "run_sequence", args: `{"path": "camera-environ.yaml"}`, want: "refused"},
		{name: "camera URL in a file under the root", tool: "run_sequence", args: `{"path": "camera-url.yaml"}`, want: "refused"},
		{name: "camera in a bench beside a file", tool: "run_sequence", args: `{"path": "camera-bench/seq.yaml"}`, want: "refused"},
	}
	probes := []edgeAttack{
		{name: "file probe at a local service", tool: "run_sequence", args: `{"path": "probe-gdb.yaml"}`, want: "refused"},
		{name: "file OpenOCD at a local service", tool: "run_sequence", args: `{"path": "probe-openocd.yaml"}`, want: "refused"},
		{name: "bench beside a file binds a probe", tool: "run_sequence", args: `{"path": "probe-bench/seq.yaml"}`, want: "refused"},
		{name: "probes argument at a local service", tool: "run_sequence", args: `{"path": "probe-bench/seq.yaml", "probes": {"p": "{{web}}"}}`, want: "refused"},
	}
	return []struct {
		name    string
		flags   []string
		attacks []edgeAttack
	}{
		{name: "read-only", flags: []string{"--root", "{{root}}", "--read-only"}, attacks: append(append(cameras,
			edgeAttack{name: "resume at an address", tool: "serial_sequence", args: ocdStep("resume 0x20000000"), want: "read-only"},
			edgeAttack{name: "the virtual board's camera", tool: "serial_sequence", args: `{"steps": [{"capture": true}]}`, allowed: true},
		), probes...)},
		{name: "probe and memory globs", flags: []string{"--root", "{{root}}", "--deny-port", "{{pty}}",
			"--allow-probe", "{{pty}}", "--allow-probe", "{{root}}/*", "--allow-mem-write", "0x20000000+0x1000"}, attacks: []edgeAttack{
			{name: "file probe on a denied pty", tool: "run_sequence", args: `{"path": "probe-pty.yaml"}`, want: "--deny-port"},
			{name: "link in the root to a denied pty", tool: "run_sequence", args: `{"path": "probe-link.yaml"}`, want: "--deny-port"},
			{name: "probes argument on a denied pty", tool: "run_sequence", args: `{"path": "probe-bench/seq.yaml", "probes": {"p": "{{pty}}"}}`, want: "refused"},
			{name: "file probe at a local service", tool: "run_sequence", args: `{"path": "probe-gdb.yaml"}`, want: "--allow-probe"},
			{name: "resume at an address", tool: "serial_sequence", args: ocdStep("resume 0x20000010"), want: "--allow-mem-write"},
			{name: "register write", tool: "serial_sequence", args: ocdStep("reg pc 0x20000010"), want: "--allow-mem-write"},
		}},
		{name: "operator bench", flags: []string{"--root", "{{root}}", "--bench", "{{outside}}/operator.bench.yaml"}, attacks: []edgeAttack{
			{name: "file probe through a bench entry", tool: "run_sequence", args: `{"path": "probe-through-bench.yaml"}`, want: "refused"},
			{name: "camera beside a bench camera", tool: "run_sequence", args: `{"path": "camera-beside-bench.yaml"}`, want: "refused"},
			{name: "bench camera with the client's input", tool: "serial_sequence", want: "refused",
				args: jsonArgs(map[string]any{"steps": map[string]any{
					"cameras": map[string]any{"top": map[string]any{"input": "http://{{web}}/top"}},
					"steps":   []any{map[string]any{"capture": map[string]any{"camera": "top"}}},
				}})},
			{name: "the bench's camera by name", tool: "serial_sequence", args: `{"steps": [{"capture": {"camera": "top"}}]}`, allowed: true},
		}},
		{name: "camera environment", flags: []string{"--root", "{{root}}"}, attacks: []edgeAttack{
			{name: "the virtual board's camera", tool: "serial_sequence", args: `{"steps": [{"capture": true}]}`, allowed: true},
		}},
	}
}

// TestEdgeAttacks runs attacks on the edges the policy once missed against
// hilrun mcp --sim, over stdio and streamable HTTP: canary files must stay
// absent, the server's secrets out of every answer and of ffmpeg's
// environment, and the local service and the pty untouched.
func TestEdgeAttacks(t *testing.T) {
	bin := hilrunBin(t)
	for _, transportName := range []string{"stdio", "http"} {
		for _, p := range edgePostures() {
			t.Run(transportName+"/"+p.name, func(t *testing.T) {
				root, outside, canaries := attackFiles(t)
				tg := newEdgeTargets(t)
				fill := edgeFiles(t, root, outside, tg)
				var flags []string
				for _, f := range p.flags {
					flags = append(flags, fill.Replace(f))
				}
				secrets := []string{randomHex(t, 16), randomHex(t, 16)}
				env := []string{"HILRUN_E2E_CANARIES=" + canaries}
				envFile := ""
				if p.name == "camera environment" {
					// A stand-in for ffmpeg that writes down the
					// environment it got, then fails as a camera would.
					dir := t.TempDir()
					envFile = filepath.Join(dir, "ffmpeg.env")
					script := fmt.Sprintf("#!/bin/sh\nenv > %s\nexit 1\n", envFile)
					if err := os.WriteFile(filepath.Join(dir, "ffmpeg"), []byte(script), 0o755); err != nil {
						t.Fatal(err)
					}
					env = append(env, "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
				}
				c := startAttacked(t, bin, transportName, flags, secrets, env...)
				for _, a := range p.attacks {
					t.Run(a.name, func(t *testing.T) {
						canary := filepath.Join(canaries, strings.ReplaceAll(a.name, " ", "-"))
						args := strings.NewReplacer("{{canary}}", canary).Replace(fill.Replace(a.args))
						answer := callRaw(t, c, a.tool, args)
						if testing.Verbose() {
							t.Logf("answer: %.600s", answer)
						}
						if a.want != "" && !strings.Contains(answer, a.want) {
							t.Errorf("%s %s: answer lacks %q:\n%s", a.tool, args, a.want, answer)
						}
						if a.allowed && strings.Contains(answer, "refused") {
							t.Errorf("%s %s: the server's own camera was refused:\n%s", a.tool, args, answer)
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
						if n := tg.webHits.Swap(0); n > 0 {
							t.Errorf("%s %s: the local service got %d connections", a.tool, args, n)
						}
						if n := tg.ptyIn.Swap(0); n > 0 {
							t.Errorf("%s %s: %d bytes were written to the pty %s", a.tool, args, n, tg.pty)
						}
						if envFile == "" {
							return
						}
						got, err := os.ReadFile(envFile)
						if err != nil {
							t.Fatalf("ffmpeg did not run: %v\n%s", err, answer)
						}
						for _, s := range secrets {
							if strings.Contains(string(got), s) {
								t.Errorf("ffmpeg's environment holds a secret of the server's:\n%s", got)
							}
						}
					})
				}
			})
		}
	}
}

// TestHTTPIdleBodiesLockNobodyOut opens many connections that declare the
// largest body and send one byte of it, the way a client would to hold the
// server's body budget: other clients must still get in.
func TestHTTPIdleBodiesLockNobodyOut(t *testing.T) {
	bin := hilrunBin(t)
	addr, _ := startHTTP(t, bin, randomHex(t, 8))
	const idle = 20
	for range idle {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 4194304\r\n\r\n{")
	}
	for i := range 3 {
		req, _ := http.NewRequest("POST", "http://"+addr+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := (&http.Client{Timeout: 20 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<12))
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("initialize %d beside %d idle bodies: status %d: %s", i+1, idle, resp.StatusCode, body)
		}
	}
}
