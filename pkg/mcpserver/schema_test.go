package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// portabilityProblems lists what, in the JSON Schema v found at path, a
// client translating tool schemas for another model API strips or rejects:
// a schema that says nothing of its value's type, a type given as an
// array, a null type, and a bare true or false where a schema object is
// expected.
func portabilityProblems(v any, path string) []string {
	m, ok := v.(map[string]any)
	if !ok {
		return []string{fmt.Sprintf("%s: %s where a schema object is expected", path, shortJSON(v))}
	}
	var out []string
	switch t := m["type"].(type) {
	case nil:
		typed := false
		for _, k := range []string{"anyOf", "oneOf", "allOf", "enum", "const", "$ref"} {
			if _, ok := m[k]; ok {
				typed = true
			}
		}
		if !typed {
			out = append(out, path+": no type")
		}
	case string:
		if t == "null" {
			out = append(out, path+`: type "null"`)
		}
	default:
		out = append(out, fmt.Sprintf("%s: type %s is not one type", path, shortJSON(t)))
	}
	if props, ok := m["properties"].(map[string]any); ok {
		for _, k := range sortedKeys(props) {
			out = append(out, portabilityProblems(props[k], path+".properties."+k)...)
		}
	}
	if defs, ok := m["$defs"].(map[string]any); ok {
		for _, k := range sortedKeys(defs) {
			out = append(out, portabilityProblems(defs[k], path+".$defs."+k)...)
		}
	}
	switch items := m["items"].(type) {
	case nil:
	case []any:
		for i, it := range items {
			out = append(out, portabilityProblems(it, fmt.Sprintf("%s.items[%d]", path, i))...)
		}
	default:
		out = append(out, portabilityProblems(items, path+".items")...)
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		list, _ := m[k].([]any)
		for i, alt := range list {
			out = append(out, portabilityProblems(alt, fmt.Sprintf("%s.%s[%d]", path, k, i))...)
		}
	}
	// additionalProperties may be a boolean; as a schema it is checked.
	if ap, ok := m["additionalProperties"].(map[string]any); ok && len(ap) > 0 {
		if _, not := ap["not"]; !not {
			out = append(out, portabilityProblems(ap, path+".additionalProperties")...)
		}
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func shortJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestToolSchemasPortable checks every input and output schema tools/list
// gives, as a client sees them (the JSON on the wire), for what translating
// clients reject: every property typed with one type, no null.
func TestToolSchemasPortable(t *testing.T) {
	e := newEnv(t, envOptions{sim: true})
	list, err := e.c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) < 10 {
		t.Fatalf("tools/list gave %d tools", len(list.Tools))
	}
	var problems []string
	for _, tool := range list.Tools {
		raw, err := json.Marshal(tool)
		if err != nil {
			t.Fatal(err)
		}
		var wire map[string]any
		if err := json.Unmarshal(raw, &wire); err != nil {
			t.Fatal(err)
		}
		for _, which := range []string{"inputSchema", "outputSchema"} {
			if s, ok := wire[which]; ok {
				problems = append(problems, portabilityProblems(s, tool.Name+"."+which)...)
			}
		}
	}
	if len(problems) > 0 {
		t.Errorf("%d schema problems:\n%s", len(problems), strings.Join(problems, "\n"))
	}
}

// TestPortabilityCheckFails shows the check above finds what it looks for.
func TestPortabilityCheckFails(t *testing.T) {
	for name, tc := range map[string]struct {
		schema string
		want   string
	}{
		"untyped property": {`{"type": "object", "properties": {"a": {"description": "x"}}}`, "properties.a: no type"},
		"type array":       {`{"type": "object", "properties": {"a": {"type": ["string", "null"]}}}`, "is not one type"},
		"null in anyOf":    {`{"type": "object", "properties": {"a": {"anyOf": [{"type": "string"}, {"type": "null"}]}}}`, `type "null"`},
		"untyped items":    {`{"type": "array", "items": {}}`, "items: no type"},
		"bare true":        {`{"type": "object", "properties": {"a": true}}`, "where a schema object is expected"},
	} {
		t.Run(name, func(t *testing.T) {
			var v any
			if err := json.Unmarshal([]byte(tc.schema), &v); err != nil {
				t.Fatal(err)
			}
			got := strings.Join(portabilityProblems(v, "s"), "\n")
			if !strings.Contains(got, tc.want) {
				t.Errorf("problems %q, want one with %q", got, tc.want)
			}
		})
	}
	var ok any
	json.Unmarshal([]byte(`{"type": "object", "properties": {"a": {"type": "string"}, "b": {"anyOf": [{"type": "array", "items": {"type": "object"}}, {"type": "string"}]}}, "additionalProperties": false}`), &ok)
	if got := portabilityProblems(ok, "s"); len(got) > 0 {
		t.Errorf("a portable schema gave problems: %q", got)
	}
}
