package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hilrun/hilrun/pkg/serialx"
)

// boardName names the adapter with vid and pid, or "".
func boardName(vid, pid string) string { return serialx.BoardName(vid, pid) }

type listPortsArgs struct{}

type portEntry struct {
	Path         string `json:"path"`
	USB          bool   `json:"usb"`
	VIDPID       string `json:"vid_pid,omitempty"`
	VID          string `json:"vid,omitempty"`
	PID          string `json:"pid,omitempty"`
	SerialNumber string `json:"serial_number,omitempty"`
	Product      string `json:"product,omitempty"`
	Board        string `json:"board,omitempty"`
	Connection   string `json:"connection,omitempty"`
}

type listPortsResult struct {
	Ports []portEntry `json:"ports"`
	// Hidden counts ports left out by --allow-port/--deny-port.
	Hidden int `json:"hidden"`
}

func (s *Server) listPorts(ctx context.Context, req mcp.CallToolRequest, _ *listPortsArgs) (any, string, error) {
	found, err := s.cfg.ListPorts()
	if err != nil {
		return nil, "", err
	}
	out := listPortsResult{Ports: []portEntry{}}
	s.mu.Lock()
	defer s.mu.Unlock()
	conn := func(p string) string {
		if c := s.findConnLocked(p); c != nil {
			return c.id
		}
		return ""
	}
	if s.cfg.DefaultPort != "" {
		out.Ports = append(out.Ports, portEntry{Path: s.cfg.DefaultPort, Board: first(s.cfg.DefaultBoard, "default port"), Connection: conn(s.cfg.DefaultPort)})
	}
	for _, p := range found {
		if s.cfg.DefaultPort != "" && realPort(p.Path) == realPort(s.cfg.DefaultPort) {
			continue
		}
		if s.cfg.Policy.CheckPort(p.Path) != nil {
			out.Hidden++
			continue
		}
		e := portEntry{Path: p.Path, USB: p.IsUSB, VID: p.VID, PID: p.PID, SerialNumber: p.SerialNumber, Product: p.Product, Connection: conn(p.Path)}
		if p.IsUSB && p.VID != "" {
			e.VIDPID = p.VID + ":" + p.PID
			e.Board = boardName(p.VID, p.PID)
		}
		out.Ports = append(out.Ports, e)
	}
	var lines []string
	for _, p := range out.Ports {
		l := p.Path
		if p.VIDPID != "" {
			l += " " + p.VIDPID
		}
		for _, x := range []string{p.Board, p.Product, p.SerialNumber} {
			if x != "" {
				l += " " + x
			}
		}
		if p.Connection != "" {
			l += " (open as " + p.Connection + ")"
		}
		lines = append(lines, l)
	}
	if len(lines) == 0 {
		lines = append(lines, "no serial ports found")
	}
	if out.Hidden > 0 {
		lines = append(lines, fmt.Sprintf("%d ports hidden by the server's port policy", out.Hidden))
	}
	return out, strings.Join(lines, "\n"), nil
}
