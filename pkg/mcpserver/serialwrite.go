package mcpserver

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hilrun/hilrun/pkg/steps"
	"github.com/hilrun/hilrun/pkg/stream"
)

type writeArgs struct {
	Connection    string `json:"connection"`
	ConnectionID  string `json:"connection_id"`
	Data          string `json:"data"`
	Encoding      string `json:"encoding"`
	Newline       any    `json:"newline"`
	Ctrl          string `json:"ctrl"`
	LockTimeoutMS *int64 `json:"lock_timeout_ms"`
}

type writeResult struct {
	ConnectionID string `json:"connection_id"`
	Cursor       int64  `json:"cursor"`
	Bytes        int    `json:"bytes"`
}

// ctrlByte is the byte of a control key: "c", "ctrl-c", "^c" give 0x03.
func ctrlByte(k string) (byte, error) {
	t := strings.TrimSpace(k)
	t = strings.TrimPrefix(strings.TrimPrefix(strings.ToLower(t), "ctrl-"), "ctrl+")
	t = strings.TrimPrefix(t, "^")
	if len(t) == 1 {
		c := t[0]
		switch {
		case c >= 'a' && c <= 'z':
			return c - 'a' + 1, nil
		case c >= '@' && c <= '_':
			return c - '@', nil
		}
	}
	if t == "" && strings.HasSuffix(k, "^") {
		return 0x1e, nil
	}
	return 0, fmt.Errorf("ctrl %q: want a letter (c for Ctrl-C) or one of @ [ \\ ] ^ _", k)
}

func decodeData(data, encoding string) ([]byte, error) {
	switch strings.ToLower(encoding) {
	case "", "utf8", "utf-8", "text":
		return []byte(data), nil
	case "hex":
		clean := strings.NewReplacer(" ", "", ":", "", "-", "", "\n", "", "\t", "", "0x", "", "0X", "").Replace(data)
		b, err := hex.DecodeString(clean)
		if err != nil {
			return nil, fmt.Errorf("data is not hex: %v", err)
		}
		return b, nil
	case "base64":
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(data))
		if err != nil {
			return nil, fmt.Errorf("data is not base64: %v", err)
		}
		return b, nil
	}
	return nil, fmt.Errorf("encoding %q: want utf8, hex or base64", encoding)
}

func (s *Server) serialWrite(ctx context.Context, req mcp.CallToolRequest, a *writeArgs) (any, string, error) {
	c, err := s.connection(first(a.Connection, a.ConnectionID))
	if err != nil {
		return nil, "", err
	}
	var data []byte
	switch {
	case a.Ctrl != "" && a.Data != "":
		return nil, "", errors.New("give data or ctrl, not both")
	case a.Ctrl != "":
		b, err := ctrlByte(a.Ctrl)
		if err != nil {
			return nil, "", err
		}
		data = []byte{b}
	default:
		if data, err = decodeData(a.Data, a.Encoding); err != nil {
			return nil, "", err
		}
	}
	switch v := a.Newline.(type) {
	case nil:
	case bool:
		if v {
			data = append(data, steps.LineEndingBytes(c.lineEnding)...)
		}
	case string:
		switch strings.ToLower(v) {
		case "lf", "crlf", "cr", "none":
			data = append(data, steps.LineEndingBytes(strings.ToLower(v))...)
		case "true":
			data = append(data, steps.LineEndingBytes(c.lineEnding)...)
		case "false", "":
		default:
			return nil, "", fmt.Errorf("newline %q: want true, false, lf, crlf, cr or none", v)
		}
	default:
		return nil, "", fmt.Errorf("newline: want true, false or a line ending (lf, crlf, cr, none)")
	}
	if len(data) == 0 {
		return nil, "", errors.New("nothing to write: give data, ctrl or newline")
	}
	release, err := s.locks.acquire(ctx, []string{portKey(realPort(c.port))}, who(ctx, req), lockWait(a.LockTimeoutMS))
	if err != nil {
		return nil, "", err
	}
	defer release()
	cur, err := c.console.Write(ctx, data)
	if err != nil {
		return nil, "", fmt.Errorf("write to %s: %w", c.port, err)
	}
	return writeResult{ConnectionID: c.id, Cursor: cur, Bytes: len(data)},
		fmt.Sprintf("wrote %d bytes to %s (%s); cursor before the write: %d", len(data), c.id, stream.Quote(data), cur), nil
}
