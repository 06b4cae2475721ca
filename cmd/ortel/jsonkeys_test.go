package main

import (
	"encoding"
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/internal/analysis"
	"github.com/ortel-dev/ortel/internal/history"
	"github.com/ortel-dev/ortel/internal/liveview"
	"github.com/ortel-dev/ortel/internal/report"
)

// snakeKey is the one key style of ortel's JSON output, report.json's.
var snakeKey = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// TestJSONKeysAreSnakeCase: every key of every JSON document ortel
// prints or serves (doctor, bench and report, compare, history, the live
// view's API) is snake_case: each exported field of the types they
// marshal, down to the leaves, has a json tag in that style (a field
// without one would be written in Go's CamelCase).
func TestJSONKeysAreSnakeCase(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    any
	}{
		{"doctor --format json", doctorReport{}},
		{"bench/report --format json, report.json", report.Report{}},
		{"compare --format json", analysis.Comparison{}},
		{"history show --format json", history.Series{}},
		{"history check --format json", history.Verdict{}},
		{"fetch --format json", fetchResult{}},
		{"live view /api/v1/metrics/current", liveview.Snapshot{}},
		{"version --format json", versionInfo{}},
		{"attach --format json", attachSummary{}},
		{"agent --format json", agentSummary{}},
		{"import --format json", importResult{}},
		{"replay --format json", replayResult{}},
		{"history list --format json", historyListResult{}},
		{"history import --format json", historyImportResult{}},
		{"history prune --format json", historyPruneResult{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, bad := range nonSnakeKeys(reflect.TypeOf(tc.v), reflect.TypeOf(tc.v).Name(), map[reflect.Type]bool{}) {
				t.Errorf("key not snake_case: %s", bad)
			}
		})
	}
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// nonSnakeKeys lists the fields of t (at path) whose JSON key is not
// snake_case; a type that marshals itself is a leaf.
func nonSnakeKeys(t reflect.Type, path string, seen map[reflect.Type]bool) []string {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] || t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler) ||
		t.Implements(textMarshaler) || reflect.PointerTo(t).Implements(textMarshaler) {
		return nil
	}
	seen[t] = true
	var bad []string
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if !f.IsExported() || tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			bad = append(bad, nonSnakeKeys(f.Type, path, seen)...)
			continue
		}
		if name == "" {
			name = f.Name
		}
		if !snakeKey.MatchString(name) {
			bad = append(bad, path+"."+f.Name+" as "+name)
		}
		bad = append(bad, nonSnakeKeys(f.Type, path+"."+name, seen)...)
	}
	return bad
}
