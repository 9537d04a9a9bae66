package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/hilrun/hilrun/pkg/gate/files"
)

// bind decodes the call's arguments into v, refusing unknown ones so a
// misspelt argument is reported rather than ignored.
func bind(req mcp.CallToolRequest, v any) error {
	data := []byte(req.Params.RawArguments)
	if len(bytes.TrimSpace(data)) == 0 || string(bytes.TrimSpace(data)) == "null" {
		var err error
		if req.Params.Arguments == nil {
			data = []byte("{}")
		} else if data, err = json.Marshal(req.Params.Arguments); err != nil {
			return fmt.Errorf("arguments: %w", err)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("arguments of %s: %s", req.Params.Name, strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

// toolHandler turns a function returning a structured value and a text
// summary into an mcp-go handler; an error becomes an isError result whose
// text is the error.
func toolHandler[A any](s *Server, fn func(ctx context.Context, req mcp.CallToolRequest, args *A) (any, string, error)) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := new(A)
		if err := bind(req, args); err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		out, text, err := fn(ctx, req, args)
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		// Clients check structured content against the output schemas; a
		// mismatch is a bug of ours, better reported by us (see nullField).
		if p := nullField(out); p != "" {
			s.logf("%s: the result holds null at %s, which its output schema does not allow", req.Params.Name, p)
			return mcp.NewToolResultError(fmt.Sprintf("internal error: the result of %s holds null at %s, which its output schema does not allow (a bug of hilrun: please report it)", req.Params.Name, p)), nil
		}
		if text == "" {
			b, _ := json.Marshal(out)
			text = string(b)
		}
		res := mcp.NewToolResultStructured(out, text)
		if p, ok := out.(interface{ pictures() (paths, uris []string) }); ok {
			paths, uris := p.pictures()
			res.Content = append(res.Content, imageContents(s.own, paths, uris)...)
		}
		return res, nil
	}
}

// Bounds on the pictures one tool result carries, so that a capture of
// many frames does not flood the client's context.
const (
	maxPictures     = 8
	maxPictureBytes = 8 << 20
)

// imageContents reads pictures (files, with their resource URIs) as MCP
// image content, the last maxPictures of them within maxPictureBytes in
// all; a text item names the resources of those left out.
func imageContents(fs files.Policy, paths, uris []string) []mcp.Content {
	var out []mcp.Content
	var left []string
	total := 0
	start := max(len(paths)-maxPictures, 0)
	left = append(left, uris[:start]...)
	for i, p := range paths[start:] {
		data, err := fs.ReadFile(p)
		if err != nil || total+len(data) > maxPictureBytes {
			left = append(left, uris[start+i])
			continue
		}
		total += len(data)
		out = append(out, mcp.NewImageContent(base64Std(data), "image/png"))
	}
	if len(left) > 0 {
		out = append(out, mcp.NewTextContent(fmt.Sprintf("%d more picture(s) are not shown here; read them as resources: %s", len(left), strings.Join(left, ", "))))
	}
	return out
}
