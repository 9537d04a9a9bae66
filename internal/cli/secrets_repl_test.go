package cli_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/internal/cli"
)

// readWritten reads every regular file under dir, an HTML report's data
// block decoded beside it, into a map by path.
func readWritten(t *testing.T, dir string, into map[string]string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		into[path] = string(b)
		if strings.HasSuffix(path, ".html") {
			into[path+" (data)"] = htmlData(t, b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// noSecretIn fails for each text of written that holds one of values.
func noSecretIn(t *testing.T, written map[string]string, values ...string) {
	t.Helper()
	for name, text := range written {
		for _, v := range values {
			if strings.Contains(text, v) {
				t.Errorf("%s holds a secret's value %q:\n%s", name, v, text)
			}
		}
	}
}

// replSecretScript sends a secret from --secret, types one's value as it
// is, has the board print one in two parts, runs a command with one from
// the bench file, and records the session.
const replSecretScript = `send echo join ${wifi_psk}
expect join
send echo hunter22-psk typed
expect typed
send echo -n psk=hunter; sleep 300; echo 22-psk
{expect: {regex: 'psk=(\S+)\r\n'}, save: got}
:vars
{exec: [sh, -c, 'echo token=$0', '${api_token}'], expect: token=}
{log: "env [${env.HILRUN_TEST_PSK}]"}
{assert: '!("HILRUN_TEST_PSK" in env) && env.HILRUN_TEST_PSK == ""'}
:steps
:record --expects REC
`

// TestReplSecretsNeverWritten: hilrun repl takes --secret and the bench
// file's secrets as run does; a typed line sends ${name}; what the session
// prints, its console log, its command output and its recording hold no
// value, the board's echo and a value split across reads included; the
// recording keeps ${name}, declares secrets: and runs again.
func TestReplSecretsNeverWritten(t *testing.T) {
	dir := t.TempDir()
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", tmp)
	t.Setenv("HILRUN_HISTORY", filepath.Join(dir, "history"))
	t.Setenv("HILRUN_TEST_PSK", secretPSK)
	// The inputs, outside the folder whose every file is read.
	in := t.TempDir()
	writeFile(t, in, "token.txt", secretToken+"\n")
	bench := writeFile(t, in, "lab.bench.yaml", "secrets:\n  api_token: file:token.txt\n  not_here: env:HILRUN_TEST_NOT_SET\n")
	rec := filepath.Join(dir, "rec.yaml")
	var out, errOut bytes.Buffer
	code := cli.Main([]string{"repl", "--sim", "--bench", bench, "--secret", "wifi_psk=env:HILRUN_TEST_PSK", "--log-dir", filepath.Join(dir, "logs")},
		strings.NewReader(strings.ReplaceAll(replSecretScript, "REC", rec)), &out, &errOut)
	if code != cli.ExitPassed {
		t.Fatalf("exit %d, want 0\n%s\n%s", code, out.String(), errOut.String())
	}
	if !strings.Contains(errOut.String(), "lab.bench.yaml:3:13: secret not_here is left out of the session: the environment variable HILRUN_TEST_NOT_SET is not set") {
		t.Errorf("no note of the bench's secret that has no value:\n%s", errOut.String())
	}
	written := map[string]string{"stdout": out.String(), "stderr": errOut.String()}
	readWritten(t, dir, written)
	noSecretIn(t, written, secretPSK, secretToken)
	var consoleLog string
	for name, text := range written {
		if strings.HasSuffix(name, "console.log") {
			consoleLog = text
		}
	}
	for _, want := range []string{"join ************\r\n", "************ typed\r\n", "psk=************\r\n"} {
		if !strings.Contains(consoleLog, want) {
			t.Errorf("the console log does not mask %q:\n%s", want, consoleLog)
		}
	}
	for _, want := range []string{"echo join ***wifi_psk***", "hilrun> send echo ***wifi_psk*** typed", "env []"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the session never says %q:\n%s", want, out.String())
		}
	}
	recorded := written[rec]
	for _, want := range []string{"secrets: [api_token, wifi_psk]", "echo join ${wifi_psk}", "echo ${wifi_psk} typed", "'${api_token}'"} {
		if !strings.Contains(recorded, want) {
			t.Errorf("the recording lacks %q:\n%s", want, recorded)
		}
	}
	code, stdout, stderr := hilrun("run", "--sim", "--bench", bench, "--secret", "wifi_psk=env:HILRUN_TEST_PSK", rec)
	if code != cli.ExitPassed {
		t.Errorf("the recording does not run again: exit %d\n%s\n%s", code, stdout, stderr)
	}
	noSecretIn(t, map[string]string{"stdout": stdout, "stderr": stderr}, secretPSK, secretToken)
}

// TestReplSecretHistory: a line that sends a secret, by ${name} or by its
// value typed as it is, is kept in the history file as ${name}.
func TestReplSecretHistory(t *testing.T) {
	t.Setenv("HILRUN_TEST_PSK", secretPSK)
	r := startRepl(t, "--secret", "wifi_psk=env:HILRUN_TEST_PSK")
	r.typ("send echo a ${wifi_psk}\r")
	r.waitFor("a ************")
	r.typ("send echo b " + secretPSK + "\r")
	r.waitFor("b ************")
	r.quit()
	hist, err := os.ReadFile(filepath.Join(r.cmd.Dir, "history"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(hist), secretPSK) || !strings.Contains(string(hist), "send echo b ${wifi_psk}") {
		t.Errorf("the history file:\n%s", hist)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if strings.Count(r.out.String(), secretPSK) > 1 {
		// Once: the terminal echoes the keys as they are typed.
		t.Errorf("the session shows the value:\n%s", r.out.String())
	}
}
