package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/hilrun/hilrun/pkg/steps"
)

// toolSpec describes one MCP tool for the policy: everything it can do,
// and what every call of it needs whatever its arguments. What a call does
// beyond that (the steps of a sequence, an upload's form) is checked per
// step against the kind table.
type toolSpec struct {
	Name string
	// Caps is everything the tool can do.
	Caps steps.Cap
	// Always is what every call needs; the server refuses the call before
	// its handler runs when the policy does not allow it.
	Always steps.Cap
	// PerStep is true for tools whose calls run steps, each checked by its
	// kind.
	PerStep bool
}

// stepCaps is everything a step of any kind can do.
var stepCaps = func() steps.Cap {
	var c steps.Cap
	for _, k := range steps.Kinds() {
		c |= k.Caps
	}
	return c
}()

// toolTable describes every tool the server serves; a tool missing from it
// is refused (and a test fails).
var toolTable = []toolSpec{
	{Name: "serial_sequence", Caps: stepCaps, PerStep: true},
	{Name: "run_sequence", Caps: stepCaps | steps.CapReadFiles, Always: steps.CapReadFiles, PerStep: true},
	{Name: "validate_sequence", Caps: steps.CapReadFiles},
	{Name: "list_ports"},
	{Name: "serial_open", Caps: steps.CapDevice, Always: steps.CapDevice},
	{Name: "serial_close", Caps: steps.CapDevice, Always: steps.CapDevice},
	{Name: "serial_status", Caps: steps.CapDevice, Always: steps.CapDevice},
	{Name: "serial_write", Caps: steps.CapDevice, Always: steps.CapDevice},
	{Name: "serial_read", Caps: steps.CapDevice, Always: steps.CapDevice},
	{Name: "serial_expect", Caps: steps.CapDevice, Always: steps.CapDevice},
	{Name: "mem_read", Caps: steps.CapMemRead | steps.CapReadFiles, Always: steps.CapMemRead},
	{Name: "mem_write", Caps: steps.CapMemWrite | steps.CapReadFiles, Always: steps.CapMemWrite},
	{Name: "build", Caps: steps.CapHostExec | steps.CapReadFiles, Always: steps.CapHostExec | steps.CapReadFiles, PerStep: true},
	{Name: "upload", Caps: steps.CapHostExec | steps.CapMemWrite | steps.CapReadFiles | steps.CapDevice, Always: steps.CapMemWrite | steps.CapReadFiles, PerStep: true},
	{Name: "task_status"},
	{Name: "console_list", Caps: steps.CapDevice, Always: steps.CapDevice},
	{Name: "serial_send", Caps: steps.CapDevice, Always: steps.CapDevice},
	{Name: "serial_send_ctrl", Caps: steps.CapDevice, Always: steps.CapDevice},
	{Name: "serial_snapshot", Caps: steps.CapDevice, Always: steps.CapDevice},
	{Name: "log_info", Caps: steps.CapDevice, Always: steps.CapDevice},
	{Name: "log_search", Caps: steps.CapDevice, Always: steps.CapDevice},
	{Name: "console_release", Caps: steps.CapDevice, Always: steps.CapDevice},
	{Name: "console_hold", Caps: steps.CapDevice, Always: steps.CapDevice},
	{Name: "task_cancel"},
	// PlatformIO (pio.go).
	{Name: "list_boards", Caps: pioCaps, Always: pioCaps},
	{Name: "get_board_info", Caps: pioCaps, Always: pioCaps},
	{Name: "list_devices", Caps: pioCaps, Always: pioCaps},
	{Name: "system_info", Caps: pioCaps, Always: pioCaps},
	{Name: "search_libraries", Caps: pioCaps, Always: pioCaps},
	{Name: "init_project", Caps: pioProjectCaps, Always: pioProjectCaps},
	{Name: "get_project_config", Caps: pioProjectCaps, Always: pioProjectCaps},
	{Name: "clean_project", Caps: pioProjectCaps, Always: pioProjectCaps},
	{Name: "upload_filesystem", Caps: pioProjectCaps | steps.CapMemWrite | steps.CapDevice, Always: pioProjectCaps | steps.CapMemWrite},
	{Name: "check_project", Caps: pioProjectCaps, Always: pioProjectCaps},
	{Name: "run_tests", Caps: pioProjectCaps | steps.CapMemWrite | steps.CapDevice, Always: pioProjectCaps | steps.CapMemWrite, PerStep: true},
	{Name: "install_library", Caps: pioProjectCaps, Always: pioProjectCaps},
	{Name: "list_installed_libraries", Caps: pioProjectCaps, Always: pioProjectCaps},
	{Name: "uninstall_library", Caps: pioProjectCaps, Always: pioProjectCaps},
	{Name: "update_library", Caps: pioProjectCaps, Always: pioProjectCaps},
	{Name: "start_monitor", Caps: steps.CapDevice, Always: steps.CapDevice},
	{Name: "stop_monitor", Caps: steps.CapDevice, Always: steps.CapDevice},
	{Name: "acquire_lock", Caps: steps.CapDevice, Always: steps.CapDevice},
	{Name: "release_lock", Caps: steps.CapDevice, Always: steps.CapDevice},
}

func lookupTool(name string) (toolSpec, bool) {
	for _, t := range toolTable {
		if t.Name == name {
			return t, true
		}
	}
	return toolSpec{}, false
}

// addTool serves tool t with handler h behind the policy: a call of a tool
// the table does not describe, or one that needs what the policy does not
// allow, is refused before h runs.
func (s *Server) addTool(t mcp.Tool, h server.ToolHandlerFunc) {
	spec, known := lookupTool(t.Name)
	t, h = withConsoleAlias(t, h)
	if ro := t.Annotations.ReadOnlyHint; ro != nil && *ro {
		// mcp.NewTool starts every tool destructive; one that changes
		// nothing is not (clients ask before destructive calls).
		t.Annotations.DestructiveHint = mcp.ToBoolPtr(false)
	}
	s.mcp.AddTool(t, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if !known {
			return mcp.NewToolResultError(refused("tool %s is not described in the server's capability table", t.Name).Error()), nil
		}
		if err := s.cfg.Policy.Allow(t.Name, spec.Always); err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		return h(ctx, req)
	})
}

// postures are the server configurations the capability matrix shows, each
// a policy and the flags that make it.
var postures = []struct {
	flags  string
	policy Policy
}{
	{"(default)", Policy{}},
	{"--root DIR", Policy{Roots: []string{"/"}}},
	{"--allow-exec --root DIR", Policy{AllowExec: true, Roots: []string{"/"}}},
	{"--allow-debug-tcl", Policy{AllowDebugTcl: true}},
	{"--read-only --root DIR --allow-exec --allow-debug-tcl", Policy{ReadOnly: true, AllowExec: true, AllowDebugTcl: true, Roots: []string{"/"}}},
}

// CapabilityMatrix is the capability matrix of docs/security.md in Markdown: what
// each server posture allows, and which step kinds and tools can do what.
// A golden test keeps the copy in docs/security.md equal to it.
func CapabilityMatrix() string {
	var b strings.Builder
	b.WriteString("| capability | what it is |")
	for _, p := range postures {
		fmt.Fprintf(&b, " `%s` |", p.flags)
	}
	b.WriteString("\n|---|---|")
	b.WriteString(strings.Repeat("---|", len(postures)))
	b.WriteByte('\n')
	for _, c := range steps.Caps() {
		fmt.Fprintf(&b, "| %s | %s |", c, c.Doc())
		for _, p := range postures {
			if p.policy.Allow("", c) == nil {
				b.WriteString(" yes |")
			} else {
				b.WriteString(" no |")
			}
		}
		b.WriteByte('\n')
	}
	b.WriteString("\n| step kind or tool | can do | notes |\n|---|---|---|\n")
	for _, k := range steps.Kinds() {
		fmt.Fprintf(&b, "| step `%s` | %s | %s |\n", k.Keys[0], k.Caps, k.Note)
	}
	for _, t := range toolTable {
		what, note := t.Caps.String(), ""
		if t.PerStep {
			note = "each step checked by its kind"
			if t.Caps == stepCaps {
				what = "what its steps do"
			}
		}
		if t.Always != 0 {
			note = strings.TrimPrefix(note+"; every call needs "+t.Always.String(), "; ")
		}
		fmt.Fprintf(&b, "| tool `%s` | %s | %s |\n", t.Name, what, note)
	}
	return b.String()
}
