//go:build unix

package mcpe2e

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestHTTPRules checks the limits and refusals of `hilrun mcp --http`
// through the real binary and its flags, with a plain HTTP client: it needs
// no Node.js.
func TestHTTPRules(t *testing.T) {
	bin := hilrunBin(t)
	mark := randomHex(t, 8)
	token := randomHex(t, 16)
	addr, exited := startHTTP(t, bin, mark, "--token", token, "--max-body", "4096", "--allow-origin", "https://lab.example.com")
	url := "http://" + addr + "/mcp"
	c := &http.Client{Timeout: 20 * time.Second}
	post := func(body string, header map[string]string) (int, string, string) {
		t.Helper()
		req, err := http.NewRequest("POST", url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "bearer "+token)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("POST %s: %v", url, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		return resp.StatusCode, string(b), resp.Header.Get("Mcp-Session-Id")
	}
	initialize := func(name string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"` + name + `","version":"1"}}}`
	}

	if code, body, _ := post(initialize(strings.Repeat("x", 5000)), nil); code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "at most 4096 bytes (--max-body)") {
		t.Errorf("a 5000-byte body with --max-body 4096: status %d: %s", code, body)
	}
	if code, body, _ := post(initialize("e2e"), map[string]string{"Origin": "https://evil.example"}); code != http.StatusForbidden || !strings.Contains(body, "--allow-origin") {
		t.Errorf("a foreign Origin: status %d: %s", code, body)
	}
	code, body, session := post(initialize("e2e"), map[string]string{"Origin": "https://lab.example.com"})
	if code != http.StatusOK || session == "" {
		t.Fatalf("initialize from an allowed origin after the refusals: status %d, session %q: %s", code, session, body)
	}
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	inSession := map[string]string{"Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-06-18"}
	if code, body, _ := post(list, inSession); code != http.StatusOK || !strings.Contains(body, "serial_sequence") {
		t.Fatalf("tools/list: status %d: %.300s", code, body)
	}
	if code, body, _ := post(list, nil); code != http.StatusBadRequest {
		t.Errorf("tools/list without a session: status %d, want 400: %s", code, body)
	}
	req, _ := http.NewRequest("DELETE", url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Session-Id", session)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE: status %d", resp.StatusCode)
	}
	if code, body, _ := post(list, inSession); code != http.StatusNotFound {
		t.Errorf("tools/list after DELETE: status %d, want 404: %s", code, body)
	}
	select {
	case err := <-exited:
		exited <- err
		t.Fatalf("hilrun mcp --http exited during the test: %v", err)
	default:
	}
}
