package mcpserver

// measuredScalar is the schema of a measured value (runner.Measurement's
// value and equals, results.MeasureStats's last): a number, text or a
// boolean. Go types them as any, for which the generator writes a bare
// true that clients translating schemas reject.
func measuredScalar() map[string]any {
	return map[string]any{
		"description": "a number, text or a boolean",
		"anyOf":       []any{map[string]any{"type": "number"}, map[string]any{"type": "string"}, map[string]any{"type": "boolean"}},
	}
}

// typeScalars gives, in the schema v and the schemas nested in it, every
// property whose schema is a bare true the schema of a measured value.
func typeScalars(v any) {
	switch x := v.(type) {
	case map[string]any:
		if props, ok := x["properties"].(map[string]any); ok {
			for name, p := range props {
				if p == true {
					props[name] = measuredScalar()
				}
			}
		}
		for _, sub := range x {
			typeScalars(sub)
		}
	case []any:
		for _, sub := range x {
			typeScalars(sub)
		}
	}
}
