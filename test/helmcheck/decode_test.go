package helmcheck

import (
	"strings"
	"testing"
)

// TestDecodeIsStrict feeds Decode objects the API server would refuse.
func TestDecodeIsStrict(t *testing.T) {
	const ok = "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: a\n"
	cases := []struct{ name, doc, want string }{
		{"unknown field", ok + "automountToken: true\n", "unknown field"},
		{"field name case", "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  Name: a\n  name: a\n", "unknown field"},
		{"duplicate field", ok + "metadata:\n  name: b\n", "already set"},
		{"wrong type", "apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: a\nspec:\n  template:\n    spec:\n      hostPID: \"yes\"\n", "cannot unmarshal"},
		{"wrong apiVersion", "apiVersion: apps/v1beta2\nkind: DaemonSet\nmetadata:\n  name: a\n", `want "apps/v1"`},
		{"unexpected kind", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n", "not one the chart"},
		{"no name", "apiVersion: v1\nkind: ConfigMap\n", "no metadata.name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode([]Manifest{{Template: "t.yaml", Text: "---\n# c\n" + tc.doc}})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "t.yaml") {
				t.Fatalf("Decode: %v, want an error naming t.yaml with %q", err, tc.want)
			}
		})
	}
	objs, err := Decode([]Manifest{{Template: "t.yaml", Text: "# only a comment\n---\n" + ok + "---\n" + strings.Replace(ok, "name: a", "name: b", 1)}})
	if err != nil || len(objs) != 2 || objs[1].ServiceAccount == nil || objs[1].Name != "b" {
		t.Fatalf("Decode of two documents: %v, %+v", err, objs)
	}
}
