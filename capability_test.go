package hilrun

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/steps"
)

// Every step kind the schema describes is in the kind table that the
// loader, the runner and the MCP policy read, and every kind of the table
// is in the schema: a kind cannot be added in one place and forgotten in
// the policy.
func TestSchemaKindsAreInTheCapabilityTable(t *testing.T) {
	var doc struct {
		Defs map[string]struct {
			OneOf []struct {
				Ref string `json:"$ref"`
			} `json:"oneOf"`
			Properties map[string]any `json:"properties"`
		} `json:"$defs"`
	}
	data, err := os.ReadFile("schemas/sequence.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	inSchema := map[steps.Kind]bool{}
	for _, ref := range doc.Defs["step"].OneOf {
		name := strings.TrimPrefix(ref.Ref, "#/$defs/")
		def, ok := doc.Defs[name]
		if !ok {
			t.Fatalf("step refers to %s, which the schema does not define", ref.Ref)
		}
		found := false
		for key := range def.Properties {
			k, ok := steps.KeyKind(key)
			if !ok {
				continue
			}
			found = true
			inSchema[k] = true
			if _, ok := steps.LookupKind(k); !ok {
				t.Errorf("schema step %s: key %s makes kind %s, which the capability table does not describe", name, key, k)
			}
		}
		if !found {
			t.Errorf("schema step %s has no key the kind table knows", name)
		}
	}
	for _, k := range steps.Kinds() {
		if !inSchema[k.Kind] {
			t.Errorf("kind %s of the capability table is not in schemas/sequence.schema.json", k.Kind)
		}
	}
}
