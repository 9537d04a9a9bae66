package mcpserver

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// FuzzInlineSequence feeds arbitrary serial_sequence arguments (a JSON
// object whose steps are a list, or a string holding JSON or YAML) through
// what the tool does before it runs anything: bind the arguments, decode
// the inline steps and decode them into a sequence. Whatever a client
// sends, the answer is a sequence or an error, never a panic or a hang;
// and an accepted sequence has steps. Its seed corpus is under
// testdata/fuzz/FuzzInlineSequence (go test fuzz v1); run it for a while
// with
//
//	go test -run '^$' -fuzz '^FuzzInlineSequence$' -fuzztime 1m ./pkg/mcpserver
func FuzzInlineSequence(f *testing.F) {
	srv, err := New(Config{Log: io.Discard, LogDir: f.TempDir(), DefaultPort: "/dev/ttyFUZZ0"})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { srv.Close() })
	for _, file := range []string{"../../sequences/sim/seed-serial-sequence.json", "../../sequences/sim/seed-memory.json"} {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(fmt.Appendf(nil, `{"steps": %s}`, b))
		}
	}
	if b, err := os.ReadFile(filepath.Join("../../sequences/sim/smoke.yaml")); err == nil {
		s, _ := json.Marshal(string(b))
		f.Add(fmt.Appendf(nil, `{"steps": %s, "name": "smoke"}`, s))
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		req := mcp.CallToolRequest{}
		req.Params.Name = "serial_sequence"
		req.Params.RawArguments = json.RawMessage(args)
		var a sequenceArgs
		if err := bind(req, &a); err != nil {
			return
		}
		watchdog := time.AfterFunc(10*time.Second, func() {
			panic(fmt.Sprintf("decoding serial_sequence arguments %q takes more than 10s", args))
		})
		seq, err := srv.inlineSequence(&a)
		watchdog.Stop()
		if err != nil {
			if strings.TrimSpace(err.Error()) == "" {
				t.Fatal("an error without a message")
			}
			return
		}
		if seq == nil {
			t.Fatalf("no sequence and no error for %q", args)
		}
		if len(seq.Steps) == 0 {
			t.Fatalf("a sequence without steps accepted from %q", args)
		}
	})
}
