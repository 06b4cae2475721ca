package semconv_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/semconv"
)

// upstreamVersion is the semantic-conventions version whose names ortel
// reuses; its Go package ships inside go.opentelemetry.io/otel.
const upstreamVersion = "v1.43.0"

// genAIVersion is the last Go semconv release that has the GenAI
// conventions: v1.42.0 removed them from the Go package. gen_ai.* names are
// checked against it.
const genAIVersion = "v1.41.0"

type upstreamMetric struct {
	unit, description, instrument string
	required, optional            []string
}

// loadUpstream reads the upstream Go semconv package from the module cache:
// metric name -> definition, and the set of attribute keys and enum values.
func loadUpstream(t *testing.T) (map[string]*upstreamMetric, string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "go.opentelemetry.io/otel").Output()
	if err != nil {
		t.Fatalf("locate module go.opentelemetry.io/otel: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "semconv", upstreamVersion)
	attrs, err := os.ReadFile(filepath.Join(dir, "attribute_group.go"))
	if err != nil {
		t.Fatalf("read upstream attributes: %v", err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*conv", "metric.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no upstream metric.go files under %s", dir)
	}
	genAIDir := filepath.Join(strings.TrimSpace(string(out)), "semconv", genAIVersion)
	genAIAttrs, err := os.ReadFile(filepath.Join(genAIDir, "attribute_group.go"))
	if err != nil {
		t.Fatalf("read upstream GenAI attributes: %v", err)
	}
	files = append(files, filepath.Join(genAIDir, "genaiconv", "metric.go"))
	var (
		typeRe     = regexp.MustCompile(`(?m)^type \w+ struct \{\n\tmetric\.(\w+)\n\}`)
		nameRe     = regexp.MustCompile(`Name\(\) string \{\n\treturn "([^"]+)"`)
		descRe     = regexp.MustCompile(`metric\.WithDescription\("((?:[^"\\]|\\.)*)"\)`)
		unitRe     = regexp.MustCompile(`metric\.WithUnit\("([^"]*)"\)`)
		requiredRe = regexp.MustCompile(`returns a required attribute for the\s+(?://\s+)?"([^"]+)"`)
		optionalRe = regexp.MustCompile(`returns an optional attribute for the\s+(?://\s+)?"([^"]+)"`)
		paramRe    = regexp.MustCompile(`attribute\.\w+\("([^"]+)",\s*([^)]+\)?)\)`)
	)
	metrics := map[string]*upstreamMetric{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s := string(data)
		locs := typeRe.FindAllStringSubmatchIndex(s, -1)
		for i, l := range locs {
			end := len(s)
			if i+1 < len(locs) {
				end = locs[i+1][0]
			}
			blk := s[l[0]:end]
			name := nameRe.FindStringSubmatch(blk)
			desc := descRe.FindStringSubmatch(blk)
			unit := unitRe.FindStringSubmatch(blk)
			if name == nil || desc == nil || unit == nil {
				continue
			}
			m := metrics[name[1]]
			if m == nil {
				m = &upstreamMetric{unit: unit[1], description: desc[1], instrument: instrumentOf(s[l[2]:l[3]])}
				metrics[name[1]] = m
			}
			for _, r := range requiredRe.FindAllStringSubmatch(blk, -1) {
				m.required = appendNew(m.required, r[1])
			}
			for _, p := range paramRe.FindAllStringSubmatch(blk, -1) {
				if arg := p[2]; arg != "val" && arg != "string(val)" {
					m.required = appendNew(m.required, p[1])
				}
			}
			for _, o := range optionalRe.FindAllStringSubmatch(blk, -1) {
				m.optional = appendNew(m.optional, o[1])
			}
		}
	}
	// gen_ai.* keys exist only in the GenAI release: keep its attribute
	// lines that name them, so other keys are still checked against
	// upstreamVersion alone.
	var genAI strings.Builder
	for _, line := range strings.Split(string(genAIAttrs), "\n") {
		if strings.Contains(line, `"gen_ai.`) || strings.Contains(line, "GenAI") {
			genAI.WriteString(line + "\n")
		}
	}
	return metrics, string(attrs) + genAI.String()
}

func instrumentOf(kind string) string {
	switch {
	case strings.HasSuffix(kind, "UpDownCounter"):
		return "updowncounter"
	case strings.HasSuffix(kind, "Counter"):
		return "counter"
	case strings.HasSuffix(kind, "Gauge"):
		return "gauge"
	case strings.HasSuffix(kind, "Histogram"):
		return "histogram"
	}
	return kind
}

func appendNew(s []string, v string) []string {
	if slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}

// TestUpstreamNamesMatchSemconv checks every name marked upstream against
// the upstream Go semconv package: the metric exists with the same
// instrument, unit, description and required attributes, every other
// attribute is one upstream allows, and every upstream attribute key and
// enum value exists. Nothing is invented inside upstream namespaces.
func TestUpstreamNamesMatchSemconv(t *testing.T) {
	metrics, attrSrc := loadUpstream(t)
	for _, m := range semconv.Metrics {
		if !m.Upstream {
			continue
		}
		t.Run(m.Name, func(t *testing.T) {
			up, ok := metrics[m.Name]
			if !ok {
				t.Fatalf("%s is marked upstream but semconv %s has no such metric", m.Name, upstreamVersion)
			}
			if m.Unit != up.unit || m.Instrument != up.instrument || m.Brief != up.description {
				t.Errorf("got %s %q %q\nwant %s %q %q", m.Instrument, m.Unit, m.Brief, up.instrument, up.unit, up.description)
			}
			req := slices.Clone(m.Required)
			sort.Strings(req)
			want := slices.Clone(up.required)
			sort.Strings(want)
			if !slices.Equal(req, want) {
				t.Errorf("required attributes = %v, upstream %v", req, want)
			}
			for _, a := range m.Attributes {
				if !slices.Contains(up.required, a) && !slices.Contains(up.optional, a) {
					t.Errorf("attribute %s is not an attribute of upstream %s", a, m.Name)
				}
			}
		})
	}
	for _, a := range semconv.Attributes {
		if !a.Upstream {
			continue
		}
		if !strings.Contains(attrSrc, `attribute.Key("`+a.Key+`")`) {
			t.Errorf("attribute %s is marked upstream but semconv %s has no such key", a.Key, upstreamVersion)
			continue
		}
		for _, v := range a.Values {
			if !strings.Contains(attrSrc, `Key.String("`+v+`")`) {
				t.Errorf("attribute %s: value %q is not an upstream enum value", a.Key, v)
			}
		}
	}
}
