package cli_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/hilrun/hilrun/internal/cli"
	"github.com/hilrun/hilrun/internal/ser2net"
	"github.com/hilrun/hilrun/pkg/sim"
	"github.com/hilrun/hilrun/pkg/testenv"
)

// TestRunOverNetworkConsoles runs sequences with hilrun run against the
// virtual board behind Debian's ser2net, raw and with RFC 2217: what
// passes on the pty passes over the network, and modem control on a raw
// socket fails with a message saying to use rfc2217://.
func TestRunOverNetworkConsoles(t *testing.T) {
	if _, err := ser2net.Path(); err != nil {
		testenv.Missing(t, "%v", err)
	}
	bin := hilrunBinary(t)
	pass := writeFile(t, t.TempDir(), "pass.yaml", `
devices:
  console: {baud: 115200, prompt: "sim> "}
steps:
  # Over the network the boot banner arrives after hilrun has connected:
  # wait for its prompt before the first send.
  - expect: "sim> "
  - send: version
    expect: "`+sim.DefaultVersion+`"
  - send: echo over the network
    expect: over the network
  - capture: {label: out, until: "sim> "}
`)
	reset := writeFile(t, t.TempDir(), "reset.yaml", `
steps:
  - reset_sequence: esp32
`)
	for _, tc := range []struct {
		mode ser2net.Mode
		seq  string
		code int
		want string
	}{
		{ser2net.Raw, pass, cli.ExitPassed, ""},
		{ser2net.RFC2217, pass, cli.ExitPassed, ""},
		{ser2net.Raw, reset, cli.ExitInfra, "is a raw socket: it has no modem lines; use rfc2217://"},
	} {
		t.Run(string(tc.mode)+" "+tc.seq[strings.LastIndex(tc.seq, "/")+1:], func(t *testing.T) {
			b := sim.New(sim.Options{})
			if err := b.Start(); err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			srv, err := ser2net.Start(ctx, t.TempDir(), b.SerialPath(), tc.mode)
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Stop()
			cmd := exec.Command(bin, "run", "--port", "console="+srv.URL(), tc.seq)
			out, _ := cmd.CombinedOutput()
			if code := cmd.ProcessState.ExitCode(); code != tc.code || !strings.Contains(string(out), tc.want) {
				t.Errorf("exit %d, want %d with %q:\n%s", code, tc.code, tc.want, out)
			}
		})
	}
}

// TestReplOverSer2net runs a REPL session on the virtual board behind
// ser2net with RFC 2217; when the server restarts, the session says the
// device left and came back, and goes on.
func TestReplOverSer2net(t *testing.T) {
	if _, err := ser2net.Path(); err != nil {
		testenv.Missing(t, "%v", err)
	}
	b := sim.New(sim.Options{})
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv, err := ser2net.Start(ctx, t.TempDir(), b.SerialPath(), ser2net.RFC2217)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	r := startReplWith(t, "--port", "console="+srv.URL())
	r.typ("send echo before\r")
	r.waitFor("before")
	if err := srv.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	r.waitFor("device console disconnected")
	r.waitFor("device console is back")
	r.typ("send echo after\r")
	r.waitFor("after")
	r.typ("{lines: {dtr: false}}\r")
	r.waitFor("did not acknowledge SET-CONTROL 9 (DTR off)")
	r.quit()
}
