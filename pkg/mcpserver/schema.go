package mcpserver

import (
	"slices"

	"github.com/mark3labs/mcp-go/mcp"
)

// Tool schemas are kept portable: clients that translate MCP tool schemas
// for other model APIs (OpenAPI-style function declarations, strict
// structured outputs) reject or strip a property without a type and a type
// given as an array such as ["string", "null"]. So every property has one
// type (or an anyOf of typed branches), and a result never holds null: a
// field that has no value is left out.

// numberPattern is what parseNumber reads from a string: decimal, 0x hex,
// 0b binary or 0o octal, with an optional minus and underscores between
// digits.
const numberPattern = `^-?(0[xX][0-9A-Fa-f_]+|0[bB][01_]+|0[oO][0-7_]+|[0-9][0-9_]*)$`

// numberText is a property holding a number as text, such as "0x48000014";
// the server takes a JSON number there too, but advertises one type.
func numberText(name, desc string) mcp.ToolOption {
	return mcp.WithString(name, mcp.Pattern(numberPattern), mcp.Description(desc))
}

// outputSchema is mcp.WithOutputSchema for T with every nullable type
// ["null", X] narrowed to X. The result types leave out a field without a
// value (omitempty) and give lists that are always there as empty lists,
// never null; the tests check every structured result against its schema.
func outputSchema[T any]() mcp.ToolOption {
	gen := mcp.WithOutputSchema[T]()
	return func(t *mcp.Tool) {
		gen(t)
		for name, p := range t.OutputSchema.Properties {
			dropNull(p)
			typeScalars(p)
			typeParams(p)
			if p == true {
				t.OutputSchema.Properties[name] = measuredScalar()
			}
		}
	}
}

// dropNull narrows, in the schema v and the schemas nested in it, a type
// array to its types other than "null", and to a single type when one is
// left.
func dropNull(v any) {
	switch x := v.(type) {
	case map[string]any:
		if types, ok := x["type"].([]any); ok {
			types = slices.DeleteFunc(slices.Clone(types), func(t any) bool { return t == "null" })
			if len(types) == 1 {
				x["type"] = types[0]
			} else {
				x["type"] = types
			}
		}
		for _, sub := range x {
			dropNull(sub)
		}
	case []any:
		for _, sub := range x {
			dropNull(sub)
		}
	}
}
