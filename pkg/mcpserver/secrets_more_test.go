package mcpserver

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/redact"
)

const testPSK = "hunter22-psk"

// pskServer is a server under --sim with the secret wifi_psk.
func pskServer(t *testing.T, config func(*Config)) *env {
	t.Helper()
	secrets, err := redact.New([]redact.Secret{{Name: "wifi_psk", Value: testPSK}})
	if err != nil {
		t.Fatal(err)
	}
	return newEnv(t, envOptions{sim: true, config: func(c *Config) {
		c.Secrets = secrets
		if config != nil {
			config(c)
		}
	}})
}

// TestSecretsNotInLogs: after a sequence sent the secret and the board
// printed it in two parts, the connection's log resource, the run's log
// and report resources, log_search, serial_snapshot and the log files
// log_info names hold no value; log_search cannot find one either.
func TestSecretsNotInLogs(t *testing.T) {
	e := pskServer(t, nil)
	conn := e.open(nil)
	var res sequenceResult
	decode(t, e.call("serial_sequence", map[string]any{"steps": `
secrets: [wifi_psk]
steps:
  - send: echo join ${wifi_psk}
    expect: join
  - send: "echo -n psk=hunter; sleep 300; echo 22-psk"
    expect: {regex: 'psk=\*+\r\n'}
`}), &res)
	if !res.Passed {
		t.Fatalf("the sequence did not pass: %+v", res)
	}
	replies := map[string]string{"connection log": e.readResource(connLogURI(conn)), "report": e.readResource(res.ReportResource)}
	for _, u := range res.LogResources {
		replies[u] = e.readResource(u)
	}
	for _, pattern := range []string{"psk=", "hunter", "join"} {
		replies["log_search "+pattern] = text(e.call("log_search", map[string]any{"console": conn, "pattern": pattern, "context": 2}))
	}
	var found logSearchResult
	decode(t, e.call("log_search", map[string]any{"console": conn, "pattern": testPSK}), &found)
	if len(found.Matches) != 0 {
		t.Errorf("log_search finds the value: %+v", found)
	}
	replies["serial_snapshot"] = text(e.call("serial_snapshot", map[string]any{"console": conn}))
	var li logInfoResult
	decode(t, e.call("log_info", map[string]any{"console": conn}), &li)
	for _, f := range []string{li.Path, li.Timeline} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		replies[f] = string(b)
	}
	for name, r := range replies {
		if strings.Contains(r, testPSK) {
			t.Errorf("%s holds the secret:\n%s", name, r)
		}
	}
	if !strings.Contains(replies["connection log"], "psk=************") || !strings.Contains(replies["connection log"], "join ************") {
		t.Errorf("the connection's log does not mask the secret:\n%s", replies["connection log"])
	}
}

// TestSecretNotReadThroughAVariable: a client's sequence that does not
// declare the server's secret gets its own variable of that name, never
// the value (else set: and assert would tell it), and ${env.NAME} and env
// read nothing.
func TestSecretNotReadThroughAVariable(t *testing.T) {
	t.Setenv("HILRUN_TEST_PSK", testPSK)
	e := pskServer(t, nil)
	e.open(nil)
	res := e.sequence(map[string]any{"steps": `
vars: {wifi_psk: mine}
steps:
  - set: {x: "${wifi_psk}"}
  - assert: x == "mine" && wifi_psk == "mine"
  - send: "echo [${wifi_psk}] [${env.HILRUN_TEST_PSK}]"
    expect: "[mine] []"
  - assert: '!("HILRUN_TEST_PSK" in env) && env.HILRUN_TEST_PSK == ""'
`})
	if !res.Passed {
		t.Errorf("the variable or env read the secret: %s", statuses(res))
	}
}

// TestClientGivesNoSecret: neither a request's own field nor a bench file
// beside a client's sequence gives a secret; the reply says where secrets
// come from.
func TestClientGivesNoSecret(t *testing.T) {
	t.Setenv("HILRUN_TEST_PSK", testPSK)
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "seq.yaml"), []byte("secrets: [api_token]\nsteps:\n  - send: echo ${api_token}\n"), 0o644)
	os.WriteFile(filepath.Join(root, "hilrun.bench.yaml"), []byte("secrets:\n  api_token: env:HILRUN_TEST_PSK\n"), 0o644)
	e := pskServer(t, func(c *Config) { c.Policy.Roots = []string{root} })
	e.open(nil)
	const want = "secret api_token has no value on this server: secrets come only from hilrun mcp --secret and the server's --bench, never from a client's request or files"
	for name, msg := range map[string]string{
		"bench beside": e.callErr("run_sequence", map[string]any{"path": "seq.yaml"}),
		"inline":       e.callErr("serial_sequence", map[string]any{"steps": "secrets: [api_token]\nsteps:\n  - send: echo ${api_token}\n"}),
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("%s: %s\nwant %q", name, msg, want)
		}
	}
	msg := e.callErr("serial_sequence", map[string]any{"steps": "secrets: [wifi_psk]\nsteps:\n  - send: echo ${wifi_psk}\n", "secrets": map[string]any{"wifi_psk": "other-value"}})
	if !strings.Contains(msg, "secrets") {
		t.Errorf("a request's secrets field: %s", msg)
	}
	t.Logf("a request's secrets field: %s", msg)
	msg = e.callErr("serial_sequence", map[string]any{"steps": "secrets: [wifi_psk]\nsteps:\n  - send: echo ${wifi_psk}\n", "vars": map[string]any{"wifi_psk": "other-value"}})
	if !strings.Contains(msg, "variable wifi_psk has the name of a secret") {
		t.Errorf("a request's variable named as a secret: %s", msg)
	}
	raw, _ := json.Marshal(msg)
	if strings.Contains(string(raw), testPSK) {
		t.Errorf("a reply holds the value: %s", raw)
	}
}
