package report_test

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/internal/analysis"
	"github.com/ortel-dev/ortel/internal/report"
)

var (
	sectionRe = regexp.MustCompile("(?m)^### `(\\w+)`\\s*$")
	headingRe = regexp.MustCompile("(?m)^#{2,3} ")
	fieldRe   = regexp.MustCompile("(?m)^\\| `([a-z0-9_]+)` \\|")
)

// docSections splits docs/report-schema.md into its "### `Type`" sections.
func docSections(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("../../docs/report-schema.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	out := map[string]string{}
	for _, m := range sectionRe.FindAllStringSubmatchIndex(doc, -1) {
		// A section ends at the next heading of level 2 or 3.
		rest := doc[m[1]:]
		if e := headingRe.FindStringIndex(rest); e != nil {
			rest = rest[:e[0]]
		}
		out[doc[m[2]:m[3]]] = rest
	}
	return out
}

// jsonFields walks the struct types reachable from root and returns, per
// type name, its JSON field names and the names of the structs it embeds.
func jsonFields(root reflect.Type) (map[string][]string, map[string][]string) {
	fields, embeds := map[string][]string{}, map[string][]string{}
	var walk func(reflect.Type)
	walk = func(ty reflect.Type) {
		for ty.Kind() == reflect.Pointer || ty.Kind() == reflect.Slice || ty.Kind() == reflect.Map {
			ty = ty.Elem()
		}
		if ty.Kind() != reflect.Struct || ty.PkgPath() == "time" {
			return
		}
		if _, ok := fields[ty.Name()]; ok {
			return
		}
		fields[ty.Name()] = []string{}
		for i := 0; i < ty.NumField(); i++ {
			f := ty.Field(i)
			if !f.IsExported() {
				continue
			}
			name := strings.Split(f.Tag.Get("json"), ",")[0]
			switch {
			case name == "-":
				continue
			case f.Anonymous && name == "":
				embeds[ty.Name()] = append(embeds[ty.Name()], f.Type.Name())
			default:
				if name == "" {
					name = f.Name
				}
				fields[ty.Name()] = append(fields[ty.Name()], name)
			}
			walk(f.Type)
		}
	}
	walk(root)
	return fields, embeds
}

// TestReportSchemaDocumented fails when a JSON field of the run report (or
// of ortel compare's JSON) is not documented in docs/report-schema.md, or
// the document lists a field the code does not have.
func TestReportSchemaDocumented(t *testing.T) {
	doc := docSections(t)
	for _, root := range []reflect.Type{reflect.TypeOf(report.Report{}), reflect.TypeOf(analysis.Comparison{})} {
		fields, embeds := jsonFields(root)
		if len(fields) < 5 {
			t.Fatalf("walked only %d types from %s", len(fields), root.Name())
		}
		for ty, names := range fields {
			sec, ok := doc[ty]
			if !ok {
				t.Errorf("docs/report-schema.md has no section \"### `%s`\"", ty)
				continue
			}
			documented := map[string]bool{}
			for _, m := range fieldRe.FindAllStringSubmatch(sec, -1) {
				documented[m[1]] = true
			}
			for _, n := range names {
				if !documented[n] {
					t.Errorf("%s.%s is not documented in its section of docs/report-schema.md", ty, n)
				}
				delete(documented, n)
			}
			for n := range documented {
				t.Errorf("docs/report-schema.md documents %s.%s, which the code does not have", ty, n)
			}
			for _, e := range embeds[ty] {
				if !strings.Contains(sec, "Embeds ["+e+"]") {
					t.Errorf("section %s does not say it embeds %s", ty, e)
				}
			}
		}
	}
}
