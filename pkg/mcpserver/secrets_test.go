package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/redact"
)

// TestSecretsNeverReplied: a client's sequence sends the server's secret
// as ${wifi_psk}; the board echoes it and prints it again in two parts.
// Neither the sequence's result, nor serial_read, nor serial_expect ever
// return the value.
func TestSecretsNeverReplied(t *testing.T) {
	const psk = "hunter22-psk"
	secrets, err := redact.New([]redact.Secret{{Name: "wifi_psk", Value: psk}})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, envOptions{sim: true, config: func(c *Config) { c.Secrets = secrets }})
	conn := e.open(nil)
	var replies []string
	res := e.call("serial_sequence", map[string]any{"steps": `
secrets: [wifi_psk]
steps:
  - send: echo join ${wifi_psk}
    expect: join
  - send: "echo -n psk=hunter; sleep 300; echo 22-psk"
    expect: {regex: 'psk=(\S+)\r\n'}
    save: got
  - assert: got == "x"
`})
	replies = append(replies, text(res))
	raw, _ := json.Marshal(res)
	replies = append(replies, string(raw))
	replies = append(replies, text(e.call("serial_read", map[string]any{"connection": conn, "cursor": 0})))
	replies = append(replies, text(e.call("serial_expect", map[string]any{"connection": conn, "pattern": "psk=", "cursor": 0, "timeout_ms": 20000})))
	for i, r := range replies {
		if strings.Contains(r, psk) || strings.Contains(r, "hunter22") {
			t.Errorf("reply %d holds the secret:\n%s", i, r)
		}
	}
	if !strings.Contains(replies[2], "psk=************") {
		t.Errorf("serial_read does not show the masked secret:\n%s", replies[2])
	}
	if !strings.Contains(replies[0], "join") || !strings.Contains(replies[0], "failed") {
		t.Errorf("the sequence's result:\n%s", replies[0])
	}
}

// TestClientCannotNameASecret: a sequence that names a secret the server
// does not have fails before it runs, whatever its own files say.
func TestClientCannotNameASecret(t *testing.T) {
	e := newEnv(t, envOptions{sim: true})
	e.open(nil)
	msg := e.callErr("serial_sequence", map[string]any{"steps": "secrets: [wifi_psk]\nsteps:\n  - send: ${wifi_psk}\n"})
	if !strings.Contains(msg, "secret wifi_psk has no value") {
		t.Errorf("got %q", msg)
	}
}
