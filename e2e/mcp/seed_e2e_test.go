//go:build unix

package mcpe2e

import "testing"

// TestSeedConsoleStdio drives smon's console tools (serial_send,
// serial_snapshot, console_release, console_hold, console_list,
// log_search) and serial_open with the Rust serial server's arguments
// through the TypeScript SDK over stdio: seed_client.mjs.
func TestSeedConsoleStdio(t *testing.T) {
	bin := prerequisites(t)
	mark := randomHex(t, 8)
	t.Cleanup(func() { checkNoOrphans(t, mark) })
	runScript(t, mark, "seed_client.mjs", "stdio", bin)
}

// TestSeedConsoleHTTP is TestSeedConsoleStdio over streamable HTTP.
func TestSeedConsoleHTTP(t *testing.T) {
	bin := prerequisites(t)
	mark := randomHex(t, 8)
	token := randomHex(t, 16)
	addr, _ := startHTTP(t, bin, mark, "--sim", "--token", token)
	runScript(t, mark, "seed_client.mjs", "http", "http://"+addr+"/mcp", token)
}
