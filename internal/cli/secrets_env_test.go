package cli_test

import (
	"strings"
	"testing"
)

// TestSecretNotRead: neither ${env.NAME} nor env in expressions reads a
// variable that holds a secret's value (the one --secret names, or another
// with the same value), while other variables stay readable; and a
// sequence that does not declare a secret gets its own variable of that
// name, not the value.
func TestSecretNotRead(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HILRUN_TEST_PSK", secretPSK)
	t.Setenv("HILRUN_TEST_PSK_COPY", secretPSK)
	t.Setenv("HILRUN_TEST_OTHER", "visible")
	declared := writeFile(t, dir, "declared.yaml", `name: declared
secrets: [wifi_psk]
steps:
  - send: echo [${env.HILRUN_TEST_PSK}] [${env.HILRUN_TEST_PSK_COPY}] [${env.HILRUN_TEST_OTHER}]
    expect: "[] [] [visible]"
  - assert: '!("HILRUN_TEST_PSK" in env) && !("HILRUN_TEST_PSK_COPY" in env) && env.HILRUN_TEST_PSK == "" && env.HILRUN_TEST_OTHER == "visible"'
  - assert: 'none(values(env), {# contains "hunter22"})'
`)
	undeclared := writeFile(t, dir, "undeclared.yaml", `name: undeclared
vars: {wifi_psk: mine}
steps:
  - set: {x: "${wifi_psk}"}
  - assert: x == "mine" && wifi_psk == "mine"
`)
	for _, seq := range []string{declared, undeclared} {
		code, stdout, stderr := hilrun("run", "--sim", "--secret", "wifi_psk=env:HILRUN_TEST_PSK", seq)
		if code != 0 || strings.Contains(stdout+stderr, secretPSK) {
			t.Errorf("%s: exit %d\n%s\n%s", seq, code, stdout, stderr)
		}
	}
}

// TestSecretSkippedNeedsNone: a sequence that the quarantine list skips
// sends nothing, so the secret it names needs no value.
func TestSecretSkippedNeedsNone(t *testing.T) {
	dir := t.TempDir()
	seq := writeFile(t, dir, "s.yaml", "name: joins\nsecrets: [wifi_psk]\nsteps:\n  - send: wifi join ${wifi_psk}\n")
	q := writeFile(t, dir, "q.yaml", "- name: joins\n  reason: no access point here\n")
	for _, cmd := range []string{"run", "validate"} {
		code, stdout, stderr := hilrun(cmd, "--sim", "--quarantine", q, seq)
		if code != 0 || cmd == "run" && !strings.Contains(stdout, "quarantined: no access point here") {
			t.Errorf("%s: exit %d\n%s\n%s", cmd, code, stdout, stderr)
		}
	}
}
