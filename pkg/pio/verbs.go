// The verbs on boards, devices, projects and the system; check.go,
// unittest.go and libraries.go hold the others.

package pio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/hilrun/hilrun/pkg/serialx"
)

// --- boards ---

// Board is one board of `pio boards --json-output`.
type Board struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Platform string `json:"platform"`
	MCU      string `json:"mcu"`
	// FCPU is the clock in Hz.
	FCPU int64 `json:"fcpu"`
	// RAM and ROM are the board's RAM and flash in bytes.
	RAM        int64    `json:"ram"`
	ROM        int64    `json:"rom"`
	Frameworks []string `json:"frameworks"`
	Vendor     string   `json:"vendor"`
	URL        string   `json:"url"`
	// Connectivity and debug tools, when the board's manifest names any.
	Connectivity []string `json:"connectivity,omitempty"`
	DebugTools   []string `json:"debug_tools,omitempty"`
}

type rawBoard struct {
	Board
	Debug *struct {
		Tools map[string]json.RawMessage `json:"tools"`
	} `json:"debug"`
}

// ListBoards runs `pio boards --json-output [filter]`: the boards whose
// data mention filter (every board for "").
func (c *Client) ListBoards(ctx context.Context, filter string) ([]Board, error) {
	args := []string{"boards", "--json-output"}
	if filter != "" {
		args = append(args, filter)
	}
	out, err := c.run(ctx, "", args)
	if err != nil {
		return nil, err
	}
	if !out.OK() {
		return nil, failed(out)
	}
	var raw []rawBoard
	if err := decodeJSON("pio boards", []byte(out.Text), &raw); err != nil {
		return nil, err
	}
	boards := make([]Board, 0, len(raw))
	for _, r := range raw {
		b := r.Board
		if b.Frameworks == nil {
			b.Frameworks = []string{}
		}
		if r.Debug != nil {
			for t := range r.Debug.Tools {
				b.DebugTools = append(b.DebugTools, t)
			}
			slices.Sort(b.DebugTools)
		}
		boards = append(boards, b)
	}
	return boards, nil
}

// BoardInfo is the board with id exactly. An unknown board is an error
// wrapping ErrInvalid.
func (c *Client) BoardInfo(ctx context.Context, id string) (*Board, error) {
	if id == "" {
		return nil, fmt.Errorf("%w: board_id is required", ErrInvalid)
	}
	boards, err := c.ListBoards(ctx, id)
	if err != nil {
		return nil, err
	}
	var near []string
	for i := range boards {
		if boards[i].ID == id {
			return &boards[i], nil
		}
		if len(near) < 5 {
			near = append(near, boards[i].ID)
		}
	}
	hint := "`hilrun pio list-boards FILTER` (MCP: list_boards) finds board ids"
	if len(near) > 0 {
		hint = "boards that mention it: " + strings.Join(near, ", ")
	}
	return nil, fmt.Errorf("%w: unknown board %q (%s)", ErrInvalid, id, hint)
}

// --- devices ---

// ListDevices runs `pio device list --json-output`; each device with a
// well-known VID:PID has its likely board in Board.
func (c *Client) ListDevices(ctx context.Context) ([]Device, error) {
	out, err := c.run(ctx, "", []string{"device", "list", "--json-output"})
	if err != nil {
		return nil, err
	}
	if !out.OK() {
		return nil, failed(out)
	}
	devs := []Device{}
	if err := decodeJSON("pio device list", []byte(out.Text), &devs); err != nil {
		return nil, err
	}
	for i := range devs {
		d := &devs[i]
		if m := vidPID.FindStringSubmatch(d.HWID); m != nil {
			d.VID, d.PID = strings.ToUpper(m[1]), strings.ToUpper(m[2])
			d.Board = serialx.BoardName(d.VID, d.PID)
		}
		if m := serialNo.FindStringSubmatch(d.HWID); m != nil {
			d.Serial = m[1]
		}
	}
	return devs, nil
}

// --- projects ---

// InitSpec is a new project: `pio project init -d dir -b board
// [-O framework=...]`.
type InitSpec struct {
	ProjectDir string
	Board      string
	// Framework is arduino, espidf, zephyr...; "" leaves it to the board.
	Framework string
}

// InitProject checks the board exists, makes the folder, and scaffolds the
// project in it.
func (c *Client) InitProject(ctx context.Context, spec InitSpec) (*Output, error) {
	if spec.ProjectDir == "" {
		return nil, fmt.Errorf("%w: project_dir is required", ErrInvalid)
	}
	if _, err := c.BoardInfo(ctx, spec.Board); err != nil {
		return nil, err
	}
	if strings.ContainsAny(spec.Framework, "\n=") {
		return nil, fmt.Errorf("%w: framework %q is not a framework name", ErrInvalid, spec.Framework)
	}
	if err := os.MkdirAll(spec.ProjectDir, 0o755); err != nil {
		return nil, fmt.Errorf("make project folder: %w", err)
	}
	args := []string{"project", "init", "-d", spec.ProjectDir, "-b", spec.Board}
	if spec.Framework != "" {
		args = append(args, "-O", "framework="+spec.Framework)
	}
	out, err := c.run(ctx, "", args)
	if err != nil {
		return nil, err
	}
	if !out.OK() {
		return out, failed(out)
	}
	return out, nil
}

// GetProjectConfig checks the project, then reads its configuration with
// `pio project config -d dir --json-output`.
func (c *Client) GetProjectConfig(ctx context.Context, dir string) (*Config, error) {
	if err := CheckProject(dir, ""); err != nil {
		return nil, err
	}
	out, err := c.run(ctx, "", []string{"project", "config", "-d", dir, "--json-output"})
	if err != nil {
		return nil, err
	}
	if !out.OK() {
		return nil, failed(out)
	}
	return parseConfig([]byte(out.Text))
}

// RunTarget runs `pio run -d dir [-e env] -t target [--upload-port port]`:
// clean, uploadfs. It returns the output whatever the exit code.
func (c *Client) RunTarget(ctx context.Context, dir, env, target, port string) (*Output, error) {
	if err := CheckProject(dir, env); err != nil {
		return nil, err
	}
	args := append(append([]string{"run"}, projectArgs(dir, env)...), "-t", target)
	if port != "" {
		args = append(args, "--upload-port", port)
	}
	return c.run(ctx, "", args)
}

// --- system ---

// InfoItem is one line of `pio system info`.
type InfoItem struct {
	Key   string `json:"key"`
	Title string `json:"title"`
	Value string `json:"value"`
}

// SystemInfo runs `pio system info --json-output`, in PlatformIO's order.
func (c *Client) SystemInfo(ctx context.Context) ([]InfoItem, error) {
	out, err := c.run(ctx, "", []string{"system", "info", "--json-output"})
	if err != nil {
		return nil, err
	}
	if !out.OK() {
		return nil, failed(out)
	}
	text := []byte(out.Text)
	var m map[string]struct {
		Title string          `json:"title"`
		Value json.RawMessage `json:"value"`
	}
	if err := decodeJSON("pio system info", text, &m); err != nil {
		return nil, err
	}
	keys, err := objectKeys(text)
	if err != nil {
		return nil, err
	}
	items := make([]InfoItem, 0, len(keys))
	for _, k := range keys {
		v := m[k]
		var s string
		if json.Unmarshal(v.Value, &s) != nil {
			s = strings.TrimSpace(string(v.Value))
		}
		items = append(items, InfoItem{Key: k, Title: v.Title, Value: s})
	}
	return items, nil
}

// objectKeys is the keys of the first JSON object in text, in order.
func objectKeys(text []byte) ([]string, error) {
	i := strings.IndexByte(string(text), '{')
	if i < 0 {
		return nil, errors.New("pio system info: no JSON object in its output")
	}
	dec := json.NewDecoder(strings.NewReader(string(text[i:])))
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("pio system info: %w", err)
		}
		keys = append(keys, t.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, fmt.Errorf("pio system info: %w", err)
		}
	}
	return keys, nil
}
