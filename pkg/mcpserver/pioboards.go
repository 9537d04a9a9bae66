package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hilrun/hilrun/pkg/pio"
)

type listBoardsArgs struct {
	Filter string `json:"filter"`
}

type boardsResult struct {
	Boards []pio.Board `json:"boards"`
}

func (s *Server) pioListBoards(ctx context.Context, _ mcp.CallToolRequest, a *listBoardsArgs) (any, string, error) {
	boards, err := s.pioClient(nil, nil).ListBoards(ctx, a.Filter)
	if err != nil {
		return nil, "", err
	}
	var lines []string
	for i, b := range boards {
		if i == 50 {
			lines = append(lines, fmt.Sprintf("... %d more in the structured result", len(boards)-50))
			break
		}
		lines = append(lines, fmt.Sprintf("%s  %s  %s  %d kB flash  %d kB RAM  (%s)", b.ID, b.Name, b.MCU, b.ROM/1024, b.RAM/1024, b.Platform))
	}
	if len(lines) == 0 {
		lines = append(lines, "no board matches "+a.Filter)
	}
	return boardsResult{Boards: boards}, strings.Join(lines, "\n"), nil
}

type boardInfoArgs struct {
	BoardID string `json:"board_id"`
	Board   string `json:"board"`
}

func (s *Server) pioBoardInfo(ctx context.Context, _ mcp.CallToolRequest, a *boardInfoArgs) (any, string, error) {
	b, err := s.pioClient(nil, nil).BoardInfo(ctx, first(a.BoardID, a.Board))
	if err != nil {
		return nil, "", err
	}
	return b, fmt.Sprintf("%s: %s, %s at %d MHz, %d bytes flash, %d bytes RAM, platform %s, frameworks %s, %s",
		b.ID, b.Name, b.MCU, b.FCPU/1000000, b.ROM, b.RAM, b.Platform, strings.Join(b.Frameworks, ", "), b.URL), nil
}

type noArgs struct{}

type devicesResult struct {
	Devices []pio.Device `json:"devices"`
}

func (s *Server) pioListDevices(ctx context.Context, _ mcp.CallToolRequest, _ *noArgs) (any, string, error) {
	devs, err := s.pioClient(nil, nil).ListDevices(ctx)
	if err != nil {
		return nil, "", err
	}
	var lines []string
	for _, d := range devs {
		l := d.Port + "  " + d.Description
		if d.VID != "" {
			l += "  " + d.VID + ":" + d.PID
		}
		if d.Board != "" {
			l += "  likely " + d.Board
		}
		lines = append(lines, l)
	}
	if len(lines) == 0 {
		lines = append(lines, "no serial devices found")
	}
	return devicesResult{Devices: devs}, strings.Join(lines, "\n"), nil
}

type systemInfoResult struct {
	Items []pio.InfoItem `json:"items"`
}

func (s *Server) pioSystemInfo(ctx context.Context, _ mcp.CallToolRequest, _ *noArgs) (any, string, error) {
	items, err := s.pioClient(nil, nil).SystemInfo(ctx)
	if err != nil {
		return nil, "", err
	}
	var lines []string
	for _, it := range items {
		lines = append(lines, it.Title+": "+it.Value)
	}
	return systemInfoResult{Items: items}, strings.Join(lines, "\n"), nil
}
