package semgen

import (
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
)

const baseAttrs = `groups:
  - id: registry.ortel.test
    type: attribute_group
    brief: Test attributes.
    attributes:
      - id: ortel.test.name
        type: string
        stability: development
        brief: A name.
        examples: ["a"]
      - id: ortel.test.session
        type: string
        stability: development
        brief: A high-cardinality id.
        annotations:
          ortel:
            spans_only: true
      - id: ortel.test.kind
        type:
          members:
            - id: fast
              value: "fast"
              brief: Fast.
              stability: development
            - id: slow
              value: "slow"
              brief: Slow.
              stability: development
        stability: development
        brief: A kind.
  - id: registry.upstream.error
    type: attribute_group
    brief: Upstream error attributes.
    annotations:
      ortel:
        upstream: true
    attributes:
      - id: error.type
        type:
          members:
            - id: other
              value: "_OTHER"
              brief: Other.
              stability: stable
        stability: stable
        brief: Describes a class of error the operation ended with.
`

// metricDef is one metric group of a test registry; zero fields take the
// defaults of a valid metric.
type metricDef struct {
	id, name, brief, stability, instrument, unit, valueType string
	ortel                                                   string // the lines under annotations.ortel
	attrs                                                   string // the attributes: block, if any
	extra                                                   string // extra group lines
}

func (d metricDef) yaml() string {
	def := func(v, dflt string) string {
		if v == "" {
			return dflt
		}
		if v == "-" {
			return ""
		}
		return v
	}
	name := def(d.name, "ortel.test.duration")
	var b strings.Builder
	fmt.Fprintf(&b, "  - id: %s\n    type: metric\n", def(d.id, "metric."+name))
	if n := def(d.name, name); n != "" {
		fmt.Fprintf(&b, "    metric_name: %s\n", n)
	}
	if s := def(d.stability, "development"); s != "" {
		fmt.Fprintf(&b, "    stability: %s\n", s)
	}
	if s := def(d.brief, "Duration of a test."); s != "" {
		fmt.Fprintf(&b, "    brief: %q\n", s)
	}
	fmt.Fprintf(&b, "    instrument: %s\n    unit: %q\n", def(d.instrument, "histogram"), def(d.unit, "s"))
	b.WriteString("    annotations:\n")
	if vt := def(d.valueType, "double"); vt != "" {
		fmt.Fprintf(&b, "      code_generation:\n        metric_value_type: %s\n", vt)
	}
	if o := def(d.ortel, "        source: instrument\n        default_enabled: true\n"); o != "" {
		b.WriteString("      ortel:\n" + o)
	}
	if d.attrs != "" {
		b.WriteString("    attributes:\n" + d.attrs)
	} else {
		b.WriteString("    attributes:\n      - ref: ortel.test.name\n        requirement_level: required\n")
	}
	b.WriteString(d.extra)
	return b.String()
}

func metricsFile(defs ...metricDef) string {
	var b strings.Builder
	b.WriteString("groups:\n")
	for _, d := range defs {
		b.WriteString(d.yaml())
	}
	return b.String()
}

func testFS(files map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for name, data := range files {
		fsys["registry/"+name] = &fstest.MapFile{Data: []byte(data)}
	}
	return fsys
}

func TestLoadValid(t *testing.T) {
	reg, err := Load(testFS(map[string]string{
		"attrs.yaml":   baseAttrs,
		"metrics.yaml": metricsFile(metricDef{}),
	}), "registry")
	if err != nil {
		t.Fatal(err)
	}
	if len(reg.Metrics) != 1 || len(reg.Attributes) != 4 {
		t.Fatalf("got %d metrics and %d attributes, want 1 and 4", len(reg.Metrics), len(reg.Attributes))
	}
	m := reg.Metrics[0]
	if m.Name != "ortel.test.duration" || m.Kind() != "Float64Histogram" || m.GoName != "OrtelTestDuration" {
		t.Errorf("metric = %s %s %s", m.Name, m.Kind(), m.GoName)
	}
	if len(m.Attributes) != 1 || m.Attributes[0].Attr.Name != "ortel.test.name" || m.Attributes[0].Level != "required" {
		t.Errorf("attributes = %+v", m.Attributes)
	}
	var names []string
	for _, a := range reg.Attributes {
		names = append(names, a.Name)
	}
	if got := strings.Join(names, " "); got != "error.type ortel.test.kind ortel.test.name ortel.test.session" {
		t.Errorf("attributes not sorted: %s", got)
	}
	if e := reg.Attributes[0]; !e.Upstream || e.Members[0].GoName != "ErrorTypeOther" {
		t.Errorf("error.type = %+v", e)
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name    string
		metrics []metricDef
		files   map[string]string // extra or replacement files
		want    []string          // substrings the error must contain
	}{
		{
			name:    "unknown attribute ref",
			metrics: []metricDef{{attrs: "      - ref: ortel.test.nmae\n        requirement_level: required\n"}},
			want:    []string{"registry/metrics.yaml:", "metric.ortel.test.duration", `unknown attribute ref "ortel.test.nmae"`},
		},
		{
			name:    "duplicate metric name",
			metrics: []metricDef{{}},
			files:   map[string]string{"more.yaml": metricsFile(metricDef{})},
			want:    []string{"registry/more.yaml:2: metric.ortel.test.duration: duplicate group id, first defined at registry/metrics.yaml:2"},
		},
		{
			name:    "duplicate metric name under another group id",
			metrics: []metricDef{{}, {id: "metric.ortel.test.duration2"}},
			want:    []string{`metric.ortel.test.duration2: duplicate metric name "ortel.test.duration"`},
		},
		{
			name: "duplicate attribute",
			files: map[string]string{"dup.yaml": `groups:
  - id: registry.ortel.dup
    type: attribute_group
    brief: Dup.
    attributes:
      - id: ortel.test.name
        type: string
        stability: development
        brief: Again.
`},
			metrics: []metricDef{{}},
			want:    []string{"registry/dup.yaml:6: ortel.test.name: duplicate attribute, first defined at registry/attrs.yaml:6"},
		},
		{
			name:    "unit in name",
			metrics: []metricDef{{name: "ortel.test.duration_seconds"}},
			want:    []string{`metric.ortel.test.duration_seconds: metric name "ortel.test.duration_seconds" ends in a unit ("seconds")`},
		},
		{
			name:    "unit in name as last dotted part",
			metrics: []metricDef{{name: "ortel.test.memory.bytes", instrument: "gauge", unit: "By", valueType: "int"}},
			want:    []string{`ends in a unit ("bytes")`},
		},
		{
			name:    "non-UCUM unit",
			metrics: []metricDef{{unit: "ms"}},
			want:    []string{`unit "ms" is not UCUM; use "s"`},
		},
		{
			name:    "own metric outside own namespaces",
			metrics: []metricDef{{name: "hw.gpu.tensor.activity", instrument: "gauge", unit: "1"}},
			want:    []string{`metric.hw.gpu.tensor.activity: "hw.gpu.tensor.activity" is outside ortel's namespaces`},
		},
		{
			name:    "upstream metric in own namespace",
			metrics: []metricDef{{ortel: "        upstream: true\n        source: instrument\n        default_enabled: true\n"}},
			want:    []string{`"ortel.test.duration" is marked upstream but lies in one of ortel's own namespaces`},
		},
		{
			name: "own attribute outside own namespaces",
			files: map[string]string{"bad.yaml": `groups:
  - id: registry.bad
    type: attribute_group
    brief: Bad.
    attributes:
      - id: gen_ai.model.flavour
        type: string
        stability: development
        brief: Invented inside gen_ai.
`},
			metrics: []metricDef{{}},
			want:    []string{`registry/bad.yaml:6: gen_ai.model.flavour: "gen_ai.model.flavour" is outside ortel's namespaces`},
		},
		{
			name:    "missing metric brief",
			metrics: []metricDef{{brief: "-"}},
			want:    []string{"metric.ortel.test.duration: missing brief"},
		},
		{
			name: "missing attribute brief",
			files: map[string]string{"nobrief.yaml": `groups:
  - id: registry.ortel.nobrief
    type: attribute_group
    brief: No brief.
    attributes:
      - id: ortel.test.other
        type: string
        stability: development
`},
			metrics: []metricDef{{}},
			want:    []string{"registry/nobrief.yaml:6: ortel.test.other: missing brief"},
		},
		{
			name:    "invalid instrument",
			metrics: []metricDef{{instrument: "summary"}},
			want:    []string{`invalid instrument "summary"`},
		},
		{
			name:    "int joules",
			metrics: []metricDef{{name: "ortel.test.energy", instrument: "counter", unit: "J", valueType: "int"}},
			want:    []string{`metric.ortel.test.energy: unit "J" needs metric_value_type double`},
		},
		{
			name:    "int watts",
			metrics: []metricDef{{name: "ortel.test.power", instrument: "gauge", unit: "W", valueType: "int"}},
			want:    []string{`unit "W" needs metric_value_type double`},
		},
		{
			name:    "int celsius",
			metrics: []metricDef{{name: "ortel.test.temperature", instrument: "gauge", unit: "Cel", valueType: "int"}},
			want:    []string{`unit "Cel" needs metric_value_type double`},
		},
		{
			name:    "int ratio gauge",
			metrics: []metricDef{{name: "ortel.test.utilization", instrument: "gauge", unit: "1", valueType: "int"}},
			want:    []string{`a gauge with unit "1" is a fraction or ratio and needs metric_value_type double`},
		},
		{
			name:    "int seconds",
			metrics: []metricDef{{valueType: "int"}},
			want:    []string{`unit "s" needs metric_value_type double`},
		},
		{
			name:    "missing value type",
			metrics: []metricDef{{valueType: "-"}},
			want:    []string{`metric_value_type must be int or double, got ""`},
		},
		{
			name:    "missing source and default",
			metrics: []metricDef{{ortel: "        observable: false\n"}},
			want:    []string{"missing annotations.ortel.source", "missing annotations.ortel.default_enabled"},
		},
		{
			name:    "observable histogram",
			metrics: []metricDef{{ortel: "        source: instrument\n        default_enabled: true\n        observable: true\n"}},
			want:    []string{"a histogram cannot be observable"},
		},
		{
			name: "buckets on a counter",
			metrics: []metricDef{{name: "ortel.test.count", instrument: "counter", unit: "{run}", valueType: "int",
				ortel: "        source: instrument\n        default_enabled: true\n        explicit_bucket_boundaries: [1, 2]\n"}},
			want: []string{"explicit_bucket_boundaries apply to histograms only"},
		},
		{
			name:    "buckets not increasing",
			metrics: []metricDef{{ortel: "        source: instrument\n        default_enabled: true\n        explicit_bucket_boundaries: [0.1, 0.5, 0.5]\n"}},
			want:    []string{"explicit_bucket_boundaries must increase strictly: 0.5 follows 0.5"},
		},
		{
			name:    "typo in a key",
			metrics: []metricDef{{extra: "    breif: typo\n"}},
			want:    []string{`registry/metrics.yaml:18: unknown key "breif"`},
		},
		{
			name:    "typo in an ortel annotation",
			metrics: []metricDef{{ortel: "        source: instrument\n        default_enabled: true\n        obsevable: true\n"}},
			want:    []string{`unknown key "obsevable"`},
		},
		{
			name:    "invalid requirement level",
			metrics: []metricDef{{attrs: "      - ref: ortel.test.name\n        requirement_level: mandatory\n"}},
			want:    []string{`attribute ref "ortel.test.name" has invalid requirement_level "mandatory"`},
		},
		{
			name:    "missing requirement level",
			metrics: []metricDef{{attrs: "      - ref: ortel.test.name\n"}},
			want:    []string{`attribute ref "ortel.test.name" has no requirement_level`},
		},
		{
			name:    "conditionally required without condition",
			metrics: []metricDef{{attrs: "      - ref: error.type\n        requirement_level: conditionally_required\n"}},
			want:    []string{`"error.type" is conditionally_required but gives no condition`},
		},
		{
			name:    "spans-only attribute on a metric",
			metrics: []metricDef{{attrs: "      - ref: ortel.test.session\n        requirement_level: recommended\n"}},
			want:    []string{`attribute "ortel.test.session" is marked spans_only`},
		},
		{
			name: "attribute listed twice",
			metrics: []metricDef{{attrs: "      - ref: ortel.test.name\n        requirement_level: required\n" +
				"      - ref: ortel.test.name\n        requirement_level: recommended\n"}},
			want: []string{`attribute "ortel.test.name" is listed twice`},
		},
		{
			name:    "attribute defined inside a metric",
			metrics: []metricDef{{attrs: "      - id: ortel.test.inline\n        type: string\n        brief: x\n        requirement_level: required\n"}},
			want:    []string{`metric attributes must be references (ref: name); define attribute "ortel.test.inline" in an attribute_group`},
		},
		{
			name:    "Go identifier collision",
			metrics: []metricDef{{}, {id: "metric.ortel.test_duration", name: "ortel.test_duration"}},
			want:    []string{`Go identifier OrtelTestDurationName is also generated for "ortel.test.duration"`},
		},
		{
			name:    "metric name that collides with an attribute identifier",
			metrics: []metricDef{{name: "ortel.test", instrument: "counter", unit: "{x}", valueType: "int"}, {}},
			want:    []string{"Go identifier OrtelTestName is also generated for"},
		},
		{
			name:    "group id does not match metric name",
			metrics: []metricDef{{id: "metric.ortel.other"}},
			want:    []string{`metric.ortel.other: metric group id must be "metric.ortel.test.duration"`},
		},
		{
			name:    "extends",
			metrics: []metricDef{{extra: "    extends: metric.ortel.common\n"}},
			want:    []string{"extends is not supported"},
		},
		{
			name:    "unsupported group type",
			files:   map[string]string{"span.yaml": "groups:\n  - id: span.ortel.run\n    type: span\n    brief: A span.\n"},
			metrics: []metricDef{{}},
			want:    []string{`registry/span.yaml:2: span.ortel.run: unsupported group type "span"`},
		},
		{
			name: "mixed and duplicate enum members",
			files: map[string]string{"enum.yaml": `groups:
  - id: registry.ortel.enum
    type: attribute_group
    brief: Enum.
    attributes:
      - id: ortel.test.level
        type:
          members:
            - id: low
              value: "low"
              brief: Low.
              stability: development
            - id: low
              value: 2
              brief: Two.
              stability: development
        stability: development
        brief: A level.
`},
			metrics: []metricDef{{}},
			want:    []string{"enum mixes string and integer values", `enum member id "low" is listed twice`},
		},
		{
			name: "unknown key in an enum member",
			files: map[string]string{"enum.yaml": `groups:
  - id: registry.ortel.enum
    type: attribute_group
    brief: Enum.
    attributes:
      - id: ortel.test.level
        type:
          members:
            - id: low
              valeu: "low"
              brief: Low.
              stability: development
        stability: development
        brief: A level.
`},
			metrics: []metricDef{{}},
			want:    []string{`registry/enum.yaml:10: unknown key "valeu"`},
		},
		{
			name:    "invalid type",
			files:   map[string]string{"t.yaml": "groups:\n  - id: registry.ortel.t\n    type: attribute_group\n    brief: T.\n    attributes:\n      - id: ortel.test.t\n        type: float\n        stability: development\n        brief: T.\n"},
			metrics: []metricDef{{}},
			want:    []string{`registry/t.yaml:6: ortel.test.t: invalid type "float"`},
		},
		{
			name:    "broken YAML",
			files:   map[string]string{"broken.yaml": "groups:\n  - id: [unclosed\n"},
			metrics: []metricDef{{}},
			want:    []string{"registry/broken.yaml:1: did not find expected"},
		},
		{
			name: "source_attributes naming another source",
			metrics: []metricDef{{ortel: "        source: receivers/cpu\n        default_enabled: true\n" +
				"        source_attributes:\n          receivers/nvml: [ortel.test.name]\n"}},
			want: []string{`metric.ortel.test.duration: source_attributes names "receivers/nvml", which is not one of its sources (receivers/cpu)`},
		},
		{
			name: "source_attributes listing an attribute the metric lacks",
			metrics: []metricDef{{ortel: "        source: receivers/cpu\n        default_enabled: true\n" +
				"        source_attributes:\n          receivers/cpu: [ortel.test.name, ortel.test.kind, ortel.test.name]\n"}},
			want: []string{`source_attributes of receivers/cpu lists "ortel.test.kind", which is not one of the metric's attributes`,
				`source_attributes of receivers/cpu lists "ortel.test.name" twice`},
		},
		{
			name: "source_attributes leaving out a required attribute",
			metrics: []metricDef{{
				ortel: "        source: receivers/cpu\n        default_enabled: true\n" +
					"        source_attributes:\n          receivers/cpu: [ortel.test.kind]\n",
				attrs: "      - ref: ortel.test.name\n        requirement_level: required\n" +
					"      - ref: ortel.test.kind\n        requirement_level: recommended\n",
			}},
			want: []string{`source_attributes of receivers/cpu leaves out "ortel.test.name", which the metric requires`},
		},
		{
			name:    "a receiver source that is not one package",
			metrics: []metricDef{{ortel: "        source: receivers/cpu/linux\n        default_enabled: true\n"}},
			want:    []string{`source "receivers/cpu/linux": a receiver source is receivers/ and one package name`},
		},
		{
			name:    "point attributes of a source",
			metrics: []metricDef{{ortel: "        source: receivers/cpu\n        default_enabled: true\n"}},
			files: map[string]string{"points.yaml": `groups:
  - id: points.receivers.cpu
    type: attribute_group
    brief: What every point carries.
    annotations:
      ortel:
        source: [receivers/cpu, receivers/memory]
        default_enabled: true
    attributes:
      - ref: ortel.test.name
        requirement_level: required
      - ref: ortel.test.nmae
        requirement_level: required
      - ref: ortel.test.session
        requirement_level: recommended
      - id: ortel.test.defined
        type: string
  - id: points.receivers.cpu.again
    type: attribute_group
    brief: Again.
    annotations:
      ortel:
        source: receivers/cpu
    attributes:
      - ref: ortel.test.kind
        requirement_level: recommended
`},
			want: []string{
				"registry/points.yaml:2: points.receivers.cpu: an attribute_group with annotations.ortel.source (the attributes a source sets on every point) may set nothing else",
				`points.receivers.cpu: unknown attribute ref "ortel.test.nmae"`,
				`points.receivers.cpu: attribute "ortel.test.session" is marked spans_only`,
				`points.receivers.cpu: metric attributes must be references (ref: name); define attribute "ortel.test.defined"`,
				`points.receivers.cpu: attribute "ortel.test.name" is already one of metric ortel.test.duration's attributes; list it in one place`,
				`points.receivers.cpu: no metric names "receivers/memory" in annotations.ortel.source`,
				`points.receivers.cpu.again: source "receivers/cpu" already has its point attributes in group points.receivers.cpu`,
			},
		},
		{
			name: "source_attributes on an attribute",
			files: map[string]string{"sa.yaml": `groups:
  - id: registry.ortel.sa
    type: attribute_group
    brief: SA.
    attributes:
      - id: ortel.test.sa
        type: string
        stability: development
        brief: SA.
        annotations:
          ortel:
            source_attributes:
              receivers/cpu: [ortel.test.sa]
`},
			metrics: []metricDef{{}},
			want:    []string{"registry/sa.yaml:6: ortel.test.sa: source, source_attributes, default_enabled, observable and explicit_bucket_boundaries apply to metrics only"},
		},
		{
			name:    "several problems reported together",
			metrics: []metricDef{{brief: "-", instrument: "summary", unit: "ms"}},
			want:    []string{"missing brief", `invalid instrument "summary"`, `unit "ms" is not UCUM`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"attrs.yaml": baseAttrs, "metrics.yaml": metricsFile(tt.metrics...)}
			for k, v := range tt.files {
				files[k] = v
			}
			_, err := Load(testFS(files), "registry")
			if err == nil {
				t.Fatal("Load succeeded, want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestLoadEmptyRegistry(t *testing.T) {
	_, err := Load(fstest.MapFS{"registry/README": &fstest.MapFile{Data: []byte("x")}}, "registry")
	if err == nil || !strings.Contains(err.Error(), `read registry "registry": no .yaml files found`) {
		t.Fatalf("err = %v, want no .yaml files found", err)
	}
	_, err = Load(fstest.MapFS{}, "missing")
	if err == nil || !strings.Contains(err.Error(), `read registry "missing"`) {
		t.Fatalf("err = %v, want read registry error", err)
	}
}

// TestAttributesOf: a receiver sets the metric's attributes (only those
// its source_attributes list, if any) and then its point attributes; the
// point attributes count as used by the source's metrics.
func TestAttributesOf(t *testing.T) {
	reg, err := Load(testFS(map[string]string{
		"attrs.yaml": baseAttrs,
		"metrics.yaml": metricsFile(metricDef{
			ortel: "        source: [receivers/cpu, receivers/nvml]\n        default_enabled: true\n" +
				"        source_attributes:\n          receivers/nvml: [ortel.test.name]\n",
			attrs: "      - ref: ortel.test.name\n        requirement_level: required\n" +
				"      - ref: ortel.test.kind\n        requirement_level: recommended\n",
		}),
		"points.yaml": `groups:
  - id: points.receivers.cpu
    type: attribute_group
    brief: Every point names its error.
    annotations:
      ortel:
        source: receivers/cpu
    attributes:
      - ref: error.type
        requirement_level:
          conditionally_required: if it failed
`,
	}), "registry")
	if err != nil {
		t.Fatal(err)
	}
	m := reg.Metrics[0]
	names := func(list []MetricAttribute) string {
		var s []string
		for _, ma := range list {
			s = append(s, ma.Attr.Name+" "+ma.Level)
		}
		return strings.Join(s, ", ")
	}
	for src, want := range map[string]string{
		"receivers/cpu":  "ortel.test.name required, ortel.test.kind recommended, error.type conditionally_required",
		"receivers/nvml": "ortel.test.name required",
	} {
		if got := names(reg.AttributesOf(m, src)); got != want {
			t.Errorf("AttributesOf(%s) = %s, want %s", src, got, want)
		}
	}
	if rs := reg.Receivers(); len(rs) != 2 || rs[0].Package != "cpu" || rs[1].Package != "nvml" || len(rs[0].Metrics) != 1 {
		t.Errorf("Receivers() = %+v", rs)
	}
	if e := reg.Attributes[0]; e.Name != "error.type" || len(e.UsedBy) != 1 || e.UsedBy[0] != m.Name {
		t.Errorf("error.type used by %v, want [%s]", e.UsedBy, m.Name)
	}
}
