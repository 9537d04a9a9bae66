package cli_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	secretPSK   = "hunter22-psk"
	secretToken = "tok-5f3a9c7e"
)

// secretSeq sends both secrets and has the board print one in two parts
// (the virtual board's sleep lets out what came before it), saves and logs
// what it printed, and fails an expect and an assert so that reports show
// what was received and the variables.
const secretSeq = `name: secret-demo
secrets: [wifi_psk, api_token]
on_failure: continue
steps:
  - send: echo join ${wifi_psk}
    expect: join
  - send: "echo -n psk=hunter; sleep 300; echo 22-psk"
    expect: {regex: 'psk=(\S+)\r\n'}
    save: got
  - log: "saved ${got}"
  - log: "env [${env.HILRUN_TEST_PSK}]"
  - assert: 'env.HILRUN_TEST_PSK == nil'
  - send: echo ${wifi_psk} again
    expect: nope
    timeout: 1s
  - exec: [sh, -c, 'echo token=$0', '${api_token}']
    expect: token=
  - assert: got == "x"
`

// TestSecretsNeverWritten runs a sequence with secrets on the virtual board
// with every report, then reads every file the run wrote (its log folder,
// reports, HTML data, Allure results) and what it printed: no secret's
// value is anywhere, the console log has '*' where the split secret was,
// and the JSON report names the secret.
func TestSecretsNeverWritten(t *testing.T) {
	dir := t.TempDir()
	seq := writeFile(t, dir, "secret.yaml", secretSeq)
	writeFile(t, dir, "token.txt", secretToken+"\n")
	t.Setenv("HILRUN_TEST_PSK", secretPSK)
	out := filepath.Join(dir, "out")
	code, stdout, stderr := hilrun("run", "--sim", "-v",
		"--secret", "wifi_psk=env:HILRUN_TEST_PSK", "--secret", "api_token=file:"+filepath.Join(dir, "token.txt"),
		"--log-dir", filepath.Join(out, "logs"), "--json", filepath.Join(out, "r.json"), "--junit", filepath.Join(out, "r.xml"),
		"--html", filepath.Join(out, "r.html"), "--allure", filepath.Join(out, "allure"), seq)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (an expect and an assert fail)\n%s\n%s", code, stdout, stderr)
	}
	written := map[string]string{"stdout": stdout, "stderr": stderr}
	err := filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		written[path] = string(b)
		if strings.HasSuffix(path, ".html") {
			written[path+" (data)"] = htmlData(t, b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(written) < 10 {
		t.Fatalf("the run wrote only %d files", len(written))
	}
	var consoleLog, jsonReport string
	for name, text := range written {
		for _, v := range []string{secretPSK, secretToken} {
			if strings.Contains(text, v) {
				t.Errorf("%s holds a secret's value %q", name, v)
			}
		}
		switch {
		case strings.HasSuffix(name, "console.log"):
			consoleLog = text
		case strings.HasSuffix(name, "r.json"):
			jsonReport = text
		}
	}
	if !strings.Contains(consoleLog, "psk=************\r\n") {
		t.Errorf("the console log does not mask the split secret:\n%s", consoleLog)
	}
	// ${env.NAME} and env in expressions do not see a secret's variable.
	for _, want := range []string{"***wifi_psk***", "***api_token***", "env []", "env.HILRUN_TEST_PSK == nil"} {
		if !strings.Contains(jsonReport, want) {
			t.Errorf("the JSON report never says %s:\n%s", want, jsonReport)
		}
	}
}

// TestSecretMissing: a secret no source gives, or too short, exits 2
// before anything runs, naming where it is declared.
func TestSecretMissing(t *testing.T) {
	dir := t.TempDir()
	seq := writeFile(t, dir, "secret.yaml", secretSeq)
	t.Setenv("HILRUN_TEST_SHORT", "12345")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"missing", nil, "secret.yaml:2:11: secret wifi_psk has no value: give --secret wifi_psk=env:VARIABLE"},
		{"unset", []string{"--secret", "wifi_psk=env:HILRUN_TEST_UNSET"}, "--secret wifi_psk=env:HILRUN_TEST_UNSET: the environment variable HILRUN_TEST_UNSET is not set"},
		{"short", []string{"--secret", "wifi_psk=env:HILRUN_TEST_SHORT"}, "secret wifi_psk is 5 bytes long"},
		{"bad source", []string{"--secret", "wifi_psk=vault:x"}, "must be env:VARIABLE or file:PATH"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{"run", "--sim"}, tc.args...), seq)
			code, stdout, stderr := hilrun(args...)
			if code != 2 || !strings.Contains(stderr, tc.want) || strings.Contains(stdout, "join") {
				t.Fatalf("exit %d, want 2 with %q\nstdout:\n%s\nstderr:\n%s", code, tc.want, stdout, stderr)
			}
		})
	}
}
