package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

type memArgs struct {
	Probe         string          `json:"probe"`
	Address       json.RawMessage `json:"address"`
	Symbol        string          `json:"symbol"`
	ELF           string          `json:"elf"`
	ELFPath       string          `json:"elf_path"`
	Offset        int64           `json:"offset"`
	Width         int             `json:"width"`
	Count         int             `json:"count"`
	Value         json.RawMessage `json:"value"`
	Values        json.RawMessage `json:"values"`
	Verify        bool            `json:"verify"`
	LockTimeoutMS *int64          `json:"lock_timeout_ms"`
}

type memResult struct {
	Probe    string   `json:"probe"`
	Address  string   `json:"address"`
	Symbol   string   `json:"symbol,omitempty"`
	Width    int      `json:"width"`
	Count    int      `json:"count"`
	Values   []uint64 `json:"values"`
	Hex      []string `json:"hex"`
	Verified bool     `json:"verified,omitempty"`
}

// parseNumber reads a JSON number or a string holding one ("0x40", "64").
func parseNumber(raw json.RawMessage, what string) (uint64, error) {
	t := strings.TrimSpace(string(raw))
	if strings.HasPrefix(t, `"`) {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, fmt.Errorf("%s: %v", what, err)
		}
		t = strings.ReplaceAll(strings.TrimSpace(s), "_", "")
	}
	if v, err := strconv.ParseUint(t, 0, 64); err == nil {
		return v, nil
	}
	if v, err := strconv.ParseInt(t, 0, 64); err == nil {
		return uint64(v), nil
	}
	return 0, fmt.Errorf("%s %s: want a number such as 0x48000014 or 32", what, t)
}

// target resolves the address, width and count of a memory tool call.
func (s *Server) memTarget(a *memArgs) (addr uint64, width, count int, err error) {
	width, count = a.Width, a.Count
	switch {
	case a.Symbol != "" && len(a.Address) > 0:
		return 0, 0, 0, errors.New("give address or symbol, not both")
	case a.Symbol != "":
		elf := first(a.ELF, a.ELFPath)
		if elf == "" {
			return 0, 0, 0, fmt.Errorf("symbol %s needs elf: the path of an ELF file under a --root", a.Symbol)
		}
		real, err := s.cfg.Policy.ResolveFile(elf)
		if err != nil {
			return 0, 0, 0, err
		}
		base, size, err := s.cfg.Engine.Symbols(real, a.Symbol)
		if err != nil {
			return 0, 0, 0, err
		}
		addr = uint64(int64(base) + a.Offset)
		if width == 0 {
			switch size {
			case 1, 2, 4, 8:
				width = int(size) * 8
			}
		}
	case len(a.Address) > 0:
		if addr, err = parseNumber(a.Address, "address"); err != nil {
			return 0, 0, 0, err
		}
		addr = uint64(int64(addr) + a.Offset)
	default:
		return 0, 0, 0, errors.New("address or symbol (with elf) is required")
	}
	if width == 0 {
		width = 32
	}
	if width != 8 && width != 16 && width != 32 && width != 64 {
		return 0, 0, 0, fmt.Errorf("width %d: want 8, 16, 32 or 64", width)
	}
	if count <= 0 {
		count = 1
	}
	return addr, width, count, nil
}

func hexValues(vs []uint64, width int) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = fmt.Sprintf("0x%0*x", width/4, v)
	}
	return out
}

func (s *Server) memRead(ctx context.Context, req mcp.CallToolRequest, a *memArgs) (any, string, error) {
	if len(a.Value) > 0 || len(a.Values) > 0 || a.Verify {
		return nil, "", errors.New("mem_read takes no value, values or verify: use mem_write")
	}
	addr, width, count, err := s.memTarget(a)
	if err != nil {
		return nil, "", err
	}
	var vs []uint64
	p, err := s.withProbe(ctx, req, a, func(d runner.Debugger) (err error) {
		vs, err = d.ReadMemory(ctx, addr, width, count)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	out := memResult{Probe: p.Name, Address: fmt.Sprintf("0x%08x", addr), Symbol: a.Symbol, Width: width, Count: len(vs), Values: vs, Hex: hexValues(vs, width)}
	if out.Values == nil {
		out.Values = []uint64{}
	}
	return out, fmt.Sprintf("%s: %s", out.Address, strings.Join(out.Hex, " ")), nil
}

func (s *Server) memWrite(ctx context.Context, req mcp.CallToolRequest, a *memArgs) (any, string, error) {
	if s.cfg.Policy.ReadOnly {
		return nil, "", refused("mem_write: the server is read-only (--read-only)")
	}
	var values []uint64
	switch {
	case len(a.Value) > 0 && len(a.Values) > 0:
		return nil, "", errors.New("give value or values, not both")
	case len(a.Value) > 0:
		v, err := parseNumber(a.Value, "value")
		if err != nil {
			return nil, "", err
		}
		values = []uint64{v}
	case len(a.Values) > 0:
		var raws []json.RawMessage
		if err := json.Unmarshal(a.Values, &raws); err != nil {
			return nil, "", fmt.Errorf("values: want a list of numbers: %v", err)
		}
		for i, r := range raws {
			v, err := parseNumber(r, fmt.Sprintf("values[%d]", i))
			if err != nil {
				return nil, "", err
			}
			values = append(values, v)
		}
		if len(values) == 0 {
			return nil, "", errors.New("values is empty: give at least one value")
		}
	default:
		return nil, "", errors.New("value (or values) is required")
	}
	if a.Count != 0 {
		return nil, "", errors.New("mem_write takes no count: the values say how many")
	}
	addr, width, _, err := s.memTarget(a)
	if err != nil {
		return nil, "", err
	}
	for i, v := range values {
		if width < 64 && v>>width != 0 {
			return nil, "", fmt.Errorf("value %d (0x%x) does not fit in %d bits", i, v, width)
		}
	}
	if err := s.cfg.Policy.CheckMemWrite(addr, uint64(width/8*len(values))); err != nil {
		return nil, "", err
	}
	var got []uint64
	p, err := s.withProbe(ctx, req, a, func(d runner.Debugger) error {
		if err := d.WriteMemory(ctx, addr, width, values); err != nil {
			return err
		}
		if !a.Verify {
			return nil
		}
		var err error
		if got, err = d.ReadMemory(ctx, addr, width, len(values)); err != nil {
			return fmt.Errorf("verify: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	out := memResult{Probe: p.Name, Address: fmt.Sprintf("0x%08x", addr), Symbol: a.Symbol, Width: width, Count: len(values), Values: values, Hex: hexValues(values, width)}
	text := fmt.Sprintf("wrote %s at %s", strings.Join(out.Hex, " "), out.Address)
	if a.Verify {
		for i := range values {
			if i >= len(got) || got[i] != values[i] {
				return nil, "", fmt.Errorf("verify at %s: wrote %s, read back %s", out.Address, strings.Join(out.Hex, " "), strings.Join(hexValues(got, width), " "))
			}
		}
		out.Verified = true
		text += ", verified"
	}
	return out, text, nil
}

// withProbe resolves the call's probe, holds its lock and runs fn on its
// pooled session; a session the bench broke is dropped, so the next call
// opens a new one.
func (s *Server) withProbe(ctx context.Context, req mcp.CallToolRequest, a *memArgs, fn func(d runner.Debugger) error) (*steps.Probe, error) {
	p, err := s.resolveProbe(a.Probe)
	if err != nil {
		return nil, err
	}
	release, err := s.locks.acquire(ctx, []string{probeKey(probeBinding(p))}, who(ctx, req), lockWait(a.LockTimeoutMS))
	if err != nil {
		return nil, err
	}
	defer release()
	d, err := s.session(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("probe %s: %w", p.Name, err)
	}
	if err := fn(d); err != nil {
		// A session the bench broke is dropped.
		if benchFault(err) {
			s.dropSession(p)
		}
		return nil, err
	}
	return p, nil
}
