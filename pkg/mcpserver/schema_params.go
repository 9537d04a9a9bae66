package mcpserver

// paramsSchema is the schema of a matrix case's values (runner.Params):
// one object whose keys are the matrix's, in the order written. The Go
// type is a list, which JSON writes as that object, so the schema made
// from the type says a list.
func paramsSchema() map[string]any {
	return map[string]any{
		"type":                 "object",
		"description":          "a matrix case's values by key, in the order the matrix wrote its keys",
		"additionalProperties": measuredScalar(),
	}
}

// typeParams gives, in the schema v and the schemas nested in it, every
// property "params" made from runner.Params the schema of what JSON
// holds.
func typeParams(v any) {
	switch x := v.(type) {
	case map[string]any:
		if props, ok := x["properties"].(map[string]any); ok {
			if p, ok := props["params"].(map[string]any); ok && p["type"] == "array" {
				props["params"] = paramsSchema()
			}
		}
		for _, sub := range x {
			typeParams(sub)
		}
	case []any:
		for _, sub := range x {
			typeParams(sub)
		}
	}
}
