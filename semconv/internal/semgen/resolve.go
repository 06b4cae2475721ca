package semgen

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// OwnNamespaces are the name prefixes ortel may define names under. Any
// other name must be marked upstream (annotations.ortel.upstream: true).
var OwnNamespaces = []string{"onnxruntime.", "nvidia.", "ortel."}

var (
	nameRe      = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$`)
	memberIDRe  = regexp.MustCompile(`^[a-z0-9][a-z0-9_.]*$`)
	receiverRe  = regexp.MustCompile(`^[a-z][a-z0-9]*$`)
	stabilities = set("stable", "development", "release_candidate", "alpha", "beta", "experimental", "deprecated")
	attrTypes   = set("string", "int", "double", "boolean", "string[]", "int[]", "double[]", "boolean[]")
	instruments = set("counter", "updowncounter", "gauge", "histogram")
	valueTypes  = set("int", "double")
	levels      = set("required", "recommended", "opt_in", "conditionally_required")
)

// unitWords are name endings that spell a unit; units belong in the unit
// field (UCUM), never in the name.
var unitWords = set("seconds", "second", "secs", "sec", "ms", "millis", "milliseconds", "us", "micros",
	"microseconds", "ns", "nanos", "nanoseconds", "minutes", "hours", "bytes", "byte", "kb", "kib", "mb",
	"mib", "gb", "gib", "bits", "joules", "joule", "watts", "watt", "celsius", "kelvin", "fahrenheit",
	"hertz", "hz", "mhz", "ghz", "percent", "pct", "total")

// badUnits are unit spellings that are not UCUM, with the UCUM form.
var badUnits = map[string]string{
	"ms": "s", "us": "s", "ns": "s", "sec": "s", "secs": "s", "seconds": "s", "second": "s",
	"B": "By", "b": "By", "bytes": "By", "byte": "By", "KB": "KiBy", "MB": "MiBy",
	"%": "1", "percent": "1", "ratio": "1", "": "1",
	"C": "Cel", "celsius": "Cel", "degC": "Cel", "watts": "W", "w": "W", "joules": "J", "j": "J",
	"hz": "Hz", "HZ": "Hz", "MHz": "Hz", "mhz": "Hz",
}

// reservedIdents are hand-written identifiers of package semconv that no
// generated identifier may take.
var reservedIdents = set("Metric", "Metrics", "Attribute", "Attributes", "LookupMetric", "LookupAttribute")

func set(s ...string) map[string]bool {
	m := make(map[string]bool, len(s))
	for _, v := range s {
		m[v] = true
	}
	return m
}

// Load reads every YAML file under root in fsys, checks it and returns the
// registry. All problems found are returned together, each naming the file,
// line and group or attribute id.
func Load(fsys fs.FS, root string) (*Registry, error) {
	files, err := readFiles(fsys, root)
	if err != nil {
		return nil, err
	}
	return resolve(files)
}

type checker struct {
	errs []error
}

func (c *checker) errorf(file string, line int, id, format string, args ...any) {
	loc := file
	if line > 0 {
		loc = fmt.Sprintf("%s:%d", file, line)
	}
	if id != "" {
		loc += ": " + id
	}
	c.errs = append(c.errs, fmt.Errorf("%s: %s", loc, fmt.Sprintf(format, args...)))
}

func ownName(name string) bool {
	for _, p := range OwnNamespaces {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

func (c *checker) checkNamespace(file string, line int, id, name string, upstream bool) {
	switch {
	case upstream && ownName(name):
		c.errorf(file, line, id, "%q is marked upstream but lies in one of ortel's own namespaces (%s)", name, strings.Join(OwnNamespaces, ", "))
	case !upstream && !ownName(name):
		c.errorf(file, line, id, "%q is outside ortel's namespaces (%s); reuse an upstream name and mark it annotations.ortel.upstream: true, or rename it", name, strings.Join(OwnNamespaces, ", "))
	}
}

func resolve(files []parsedFile) (*Registry, error) {
	c := &checker{}
	reg := &Registry{}
	attrs := map[string]*Attribute{}
	groupIDs := map[string]string{}
	type pendingMetric struct {
		m    *Metric
		refs []rawAttr
	}
	var metrics []pendingMetric
	metricNames := map[string]*Metric{}
	type pendingGroup struct {
		file string
		g    rawGroup
	}
	var pointGroups []pendingGroup

	for _, f := range files {
		for _, g := range f.groups {
			if g.ID == "" {
				c.errorf(f.path, g.line, "", "group has no id")
				continue
			}
			if prev, ok := groupIDs[g.ID]; ok {
				c.errorf(f.path, g.line, g.ID, "duplicate group id, first defined at %s", prev)
				continue
			}
			groupIDs[g.ID] = fmt.Sprintf("%s:%d", f.path, g.line)
			if g.Extends != "" {
				c.errorf(f.path, g.line, g.ID, "extends is not supported; list the attributes in the group")
			}
			switch g.Type {
			case "attribute_group":
				if o := g.Annotations.Ortel; o != nil && len(o.Source) > 0 {
					pointGroups = append(pointGroups, pendingGroup{f.path, g})
					continue
				}
				for _, a := range c.attributeGroup(f.path, g) {
					if prev, ok := attrs[a.Name]; ok {
						c.errorf(f.path, a.Line, a.Name, "duplicate attribute, first defined at %s:%d", prev.File, prev.Line)
						continue
					}
					attrs[a.Name] = a
					reg.Attributes = append(reg.Attributes, a)
				}
			case "metric":
				m := c.metricGroup(f.path, g)
				if m == nil {
					continue
				}
				if prev, ok := metricNames[m.Name]; ok {
					c.errorf(f.path, m.Line, g.ID, "duplicate metric name %q, first defined at %s:%d", m.Name, prev.File, prev.Line)
					continue
				}
				metricNames[m.Name] = m
				metrics = append(metrics, pendingMetric{m, g.Attributes})
				reg.Metrics = append(reg.Metrics, m)
			case "":
				c.errorf(f.path, g.line, g.ID, "group has no type (attribute_group or metric)")
			default:
				c.errorf(f.path, g.line, g.ID, "unsupported group type %q (supported: attribute_group, metric)", g.Type)
			}
		}
	}

	// Resolve the metrics' attribute references.
	for _, pm := range metrics {
		m := pm.m
		m.Attributes = c.refs(m.File, "metric."+m.Name, pm.refs, attrs)
		for _, ma := range m.Attributes {
			ma.Attr.UsedBy = append(ma.Attr.UsedBy, m.Name)
		}
		c.checkSourceAttributes(m)
	}

	// The attributes a source sets on every point of its metrics.
	reg.PointAttributes = map[string][]MetricAttribute{}
	reg.PointBriefs = map[string]string{}
	pointGroupOf := map[string]string{}
	for _, pg := range pointGroups {
		g := pg.g
		c.checkPointGroup(pg.file, g)
		list := c.refs(pg.file, g.ID, g.Attributes, attrs)
		for _, src := range g.Annotations.Ortel.Source {
			if prev, ok := pointGroupOf[src]; ok {
				c.errorf(pg.file, g.line, g.ID, "source %q already has its point attributes in group %s; list them in one group", src, prev)
				continue
			}
			pointGroupOf[src] = g.ID
			var emitted []*Metric
			for _, m := range reg.Metrics {
				if slices.Contains(m.Source, src) {
					emitted = append(emitted, m)
				}
			}
			if len(emitted) == 0 {
				c.errorf(pg.file, g.line, g.ID, "no metric names %q in annotations.ortel.source", src)
				continue
			}
			reg.PointAttributes[src] = list
			reg.PointBriefs[src] = strings.Join(strings.Fields(g.Brief), " ")
			for _, m := range emitted {
				own := reg.AttributesOf(m, src)
				own = own[:len(own)-len(list)]
				for _, ma := range list {
					if slices.ContainsFunc(own, func(o MetricAttribute) bool { return o.Attr == ma.Attr }) {
						c.errorf(pg.file, g.line, g.ID, "attribute %q is already one of metric %s's attributes; list it in one place", ma.Attr.Name, m.Name)
						continue
					}
					if !slices.Contains(ma.Attr.UsedBy, m.Name) {
						ma.Attr.UsedBy = append(ma.Attr.UsedBy, m.Name)
					}
				}
			}
		}
	}

	sort.Slice(reg.Attributes, func(i, j int) bool { return reg.Attributes[i].Name < reg.Attributes[j].Name })
	sort.Slice(reg.Metrics, func(i, j int) bool { return reg.Metrics[i].Name < reg.Metrics[j].Name })
	for _, a := range reg.Attributes {
		sort.Strings(a.UsedBy)
	}
	c.checkIdents(reg)
	if len(c.errs) > 0 {
		return nil, errors.Join(c.errs...)
	}
	return reg, nil
}

// refs resolves the attribute references of the metric or group id,
// checking each one's requirement level.
func (c *checker) refs(file, id string, raw []rawAttr, attrs map[string]*Attribute) []MetricAttribute {
	var out []MetricAttribute
	seen := map[string]bool{}
	for _, r := range raw {
		if r.ID != "" || r.Ref == "" {
			c.errorf(file, r.line, id, "metric attributes must be references (ref: name); define attribute %q in an attribute_group", r.ID)
			continue
		}
		if r.Type.Name != "" || r.Type.Enum || r.Stability != "" {
			c.errorf(file, r.line, id, "attribute ref %q may not redefine type or stability", r.Ref)
		}
		a, ok := attrs[r.Ref]
		if !ok {
			c.errorf(file, r.line, id, "unknown attribute ref %q: define it in an attribute_group first", r.Ref)
			continue
		}
		if seen[r.Ref] {
			c.errorf(file, r.line, id, "attribute %q is listed twice", r.Ref)
			continue
		}
		seen[r.Ref] = true
		if a.SpansOnly {
			c.errorf(file, r.line, id, "attribute %q is marked spans_only (high cardinality) and may not be a metric attribute", r.Ref)
		}
		lvl := r.RequirementLevel
		switch {
		case lvl.Level == "":
			c.errorf(file, r.line, id, "attribute ref %q has no requirement_level (required, recommended, opt_in or conditionally_required)", r.Ref)
		case !levels[lvl.Level]:
			c.errorf(file, r.line, id, "attribute ref %q has invalid requirement_level %q (want required, recommended, opt_in or conditionally_required)", r.Ref, lvl.Level)
		case lvl.Level == "conditionally_required" && lvl.Condition == "":
			c.errorf(file, r.line, id, "attribute ref %q is conditionally_required but gives no condition; write {conditionally_required: <condition>}", r.Ref)
		}
		out = append(out, MetricAttribute{Attr: a, Level: lvl.Level, Condition: lvl.Condition})
	}
	return out
}

// checkSourceAttributes checks a metric's source_attributes: each names
// one of its sources and lists some of its attributes, every required one
// among them.
func (c *checker) checkSourceAttributes(m *Metric) {
	id := "metric." + m.Name
	for _, src := range slices.Sorted(maps.Keys(m.SourceAttributes)) {
		if !slices.Contains(m.Source, src) {
			c.errorf(m.File, m.Line, id, "source_attributes names %q, which is not one of its sources (%s)", src, strings.Join(m.Source, ", "))
			continue
		}
		names := m.SourceAttributes[src]
		seen := map[string]bool{}
		for _, n := range names {
			switch {
			case seen[n]:
				c.errorf(m.File, m.Line, id, "source_attributes of %s lists %q twice", src, n)
			case !slices.ContainsFunc(m.Attributes, func(ma MetricAttribute) bool { return ma.Attr.Name == n }):
				c.errorf(m.File, m.Line, id, "source_attributes of %s lists %q, which is not one of the metric's attributes", src, n)
			}
			seen[n] = true
		}
		for _, ma := range m.Attributes {
			if ma.Level == "required" && !seen[ma.Attr.Name] {
				c.errorf(m.File, m.Line, id, "source_attributes of %s leaves out %q, which the metric requires", src, ma.Attr.Name)
			}
		}
	}
}

// checkPointGroup checks an attribute_group that lists the attributes a
// source sets on every point: it references attributes and sets nothing
// but the source.
func (c *checker) checkPointGroup(file string, g rawGroup) {
	o := g.Annotations.Ortel
	if o.Upstream || o.SpansOnly || o.metricOnly() {
		c.errorf(file, g.line, g.ID, "an attribute_group with annotations.ortel.source (the attributes a source sets on every point) may set nothing else under annotations.ortel")
	}
	if g.Annotations.CodeGeneration != nil {
		c.errorf(file, g.line, g.ID, "annotations.code_generation applies to metrics only")
	}
	if g.MetricName != "" || g.Instrument != "" || g.Unit != "" {
		c.errorf(file, g.line, g.ID, "metric_name, instrument and unit belong in a group of type metric")
	}
	if strings.TrimSpace(g.Brief) == "" {
		c.errorf(file, g.line, g.ID, "missing brief")
	}
	if len(g.Attributes) == 0 {
		c.errorf(file, g.line, g.ID, "attribute_group has no attributes")
	}
	c.checkSources(file, g.line, g.ID, o.Source)
}

// checkSources checks source names: not empty, and a receiver source names
// one package directly under receivers/.
func (c *checker) checkSources(file string, line int, id string, sources []string) {
	for _, s := range sources {
		switch {
		case strings.TrimSpace(s) == "":
			c.errorf(file, line, id, "empty source")
		case strings.HasPrefix(s, ReceiverPrefix) && !receiverRe.MatchString(strings.TrimPrefix(s, ReceiverPrefix)):
			c.errorf(file, line, id, "source %q: a receiver source is receivers/ and one package name in lower-case letters and digits, such as receivers/cpu", s)
		}
	}
}

func (c *checker) attributeGroup(file string, g rawGroup) []*Attribute {
	groupUpstream := false
	if o := g.Annotations.Ortel; o != nil {
		groupUpstream = o.Upstream
		if o.SpansOnly || o.metricOnly() {
			c.errorf(file, g.line, g.ID, "an attribute_group's annotations.ortel may only set upstream, or source (for the attributes a source sets on every point)")
		}
	}
	if g.Annotations.CodeGeneration != nil {
		c.errorf(file, g.line, g.ID, "annotations.code_generation applies to metrics only")
	}
	if g.MetricName != "" || g.Instrument != "" || g.Unit != "" {
		c.errorf(file, g.line, g.ID, "metric_name, instrument and unit belong in a group of type metric")
	}
	if len(g.Attributes) == 0 {
		c.errorf(file, g.line, g.ID, "attribute_group has no attributes")
	}
	var out []*Attribute
	for _, ra := range g.Attributes {
		if ra.Ref != "" || ra.ID == "" {
			c.errorf(file, ra.line, g.ID, "an attribute_group defines attributes with id:, not ref: (got ref %q)", ra.Ref)
			continue
		}
		a := &Attribute{
			Name:      ra.ID,
			Brief:     strings.TrimSpace(ra.Brief),
			Note:      strings.TrimSpace(ra.Note),
			Stability: ra.Stability,
			Examples:  examples(ra.Examples),
			Upstream:  groupUpstream,
			File:      file,
			Line:      ra.line,
			GoName:    GoName(ra.ID),
		}
		if o := ra.Annotations.Ortel; o != nil {
			a.Upstream = a.Upstream || o.Upstream
			a.SpansOnly = o.SpansOnly
			if len(o.Source) > 0 || o.metricOnly() {
				c.errorf(file, ra.line, ra.ID, "source, source_attributes, default_enabled, observable and explicit_bucket_boundaries apply to metrics only")
			}
		}
		if ra.Annotations.CodeGeneration != nil {
			c.errorf(file, ra.line, ra.ID, "annotations.code_generation applies to metrics only")
		}
		if !nameRe.MatchString(a.Name) {
			c.errorf(file, ra.line, ra.ID, "invalid attribute name: want lower-case dot-separated words such as \"onnxruntime.model.name\"")
		}
		c.checkNamespace(file, ra.line, ra.ID, a.Name, a.Upstream)
		if a.Brief == "" {
			c.errorf(file, ra.line, ra.ID, "missing brief")
		}
		if !stabilities[a.Stability] {
			c.errorf(file, ra.line, ra.ID, "invalid or missing stability %q (want development, release_candidate, stable, ...)", a.Stability)
		}
		if ra.RequirementLevel.Level != "" {
			c.errorf(file, ra.line, ra.ID, "requirement_level belongs on the metric's attribute ref, not on the definition")
		}
		switch {
		case ra.Type.Enum:
			a.Type = "enum"
			c.enumMembers(file, ra, a)
		case ra.Type.Name == "":
			c.errorf(file, ra.line, ra.ID, "missing type")
		case !attrTypes[ra.Type.Name]:
			c.errorf(file, ra.line, ra.ID, "invalid type %q (want string, int, double, boolean, string[], int[], double[], boolean[] or {members: [...]})", ra.Type.Name)
		default:
			a.Type = ra.Type.Name
		}
		out = append(out, a)
	}
	return out
}

func (c *checker) enumMembers(file string, ra rawAttr, a *Attribute) {
	if len(ra.Type.Members) == 0 {
		c.errorf(file, ra.line, ra.ID, "enum has no members")
		return
	}
	ids, values := map[string]bool{}, map[string]bool{}
	for _, rm := range ra.Type.Members {
		m := Member{ID: rm.ID, Brief: strings.TrimSpace(rm.Brief), Stability: rm.Stability}
		switch v := rm.Value.(type) {
		case string:
			m.Value = v
			c.enumType(file, ra, a, "string")
		case int:
			m.Value = v
			c.enumType(file, ra, a, "int")
		default:
			c.errorf(file, ra.line, ra.ID, "enum member %q: value must be a string or an integer, got %v", rm.ID, rm.Value)
			continue
		}
		if !memberIDRe.MatchString(rm.ID) {
			c.errorf(file, ra.line, ra.ID, "enum member id %q: want lower-case letters, digits, '_' and '.'", rm.ID)
			continue
		}
		if ids[rm.ID] {
			c.errorf(file, ra.line, ra.ID, "enum member id %q is listed twice", rm.ID)
		}
		ids[rm.ID] = true
		if vs := fmt.Sprint(m.Value); values[vs] {
			c.errorf(file, ra.line, ra.ID, "enum value %q is listed twice", vs)
		} else {
			values[vs] = true
		}
		if m.Brief == "" {
			c.errorf(file, ra.line, ra.ID, "enum member %q: missing brief", rm.ID)
		}
		if !stabilities[m.Stability] {
			c.errorf(file, ra.line, ra.ID, "enum member %q: invalid or missing stability %q", rm.ID, m.Stability)
		}
		m.GoName = a.GoName + GoName(rm.ID)
		a.Members = append(a.Members, m)
	}
}

func (c *checker) enumType(file string, ra rawAttr, a *Attribute, t string) {
	if a.EnumType == "" {
		a.EnumType = t
	} else if a.EnumType != t {
		c.errorf(file, ra.line, ra.ID, "enum mixes string and integer values")
	}
}

func (c *checker) metricGroup(file string, g rawGroup) *Metric {
	m := &Metric{
		Name:       g.MetricName,
		Instrument: g.Instrument,
		Unit:       g.Unit,
		Brief:      strings.TrimSpace(g.Brief),
		Note:       strings.TrimSpace(g.Note),
		Stability:  g.Stability,
		File:       file,
		Line:       g.line,
		GoName:     GoName(g.MetricName),
	}
	id := g.ID
	if m.Name == "" {
		c.errorf(file, g.line, id, "metric group has no metric_name")
		return nil
	}
	if id != "metric."+m.Name {
		c.errorf(file, g.line, id, "metric group id must be %q", "metric."+m.Name)
	}
	if !nameRe.MatchString(m.Name) {
		c.errorf(file, g.line, id, "invalid metric name %q: want lower-case dot-separated words such as \"onnxruntime.run.duration\"", m.Name)
	}
	if last := m.Name[strings.LastIndexAny(m.Name, "._")+1:]; unitWords[last] {
		c.errorf(file, g.line, id, "metric name %q ends in a unit (%q); put the unit in unit: (UCUM) and drop it from the name", m.Name, last)
	}
	if m.Brief == "" {
		c.errorf(file, g.line, id, "missing brief")
	}
	if !stabilities[m.Stability] {
		c.errorf(file, g.line, id, "invalid or missing stability %q (want development, release_candidate, stable, ...)", m.Stability)
	}
	if !instruments[m.Instrument] {
		c.errorf(file, g.line, id, "invalid instrument %q (want counter, updowncounter, gauge or histogram)", m.Instrument)
	}
	if fix, bad := badUnits[m.Unit]; bad {
		c.errorf(file, g.line, id, "unit %q is not UCUM; use %q", m.Unit, fix)
	} else if strings.ContainsAny(m.Unit, " \t") {
		c.errorf(file, g.line, id, "unit %q contains white space", m.Unit)
	}
	if cg := g.Annotations.CodeGeneration; cg != nil {
		m.ValueType = cg.MetricValueType
	}
	if !valueTypes[m.ValueType] {
		c.errorf(file, g.line, id, "annotations.code_generation.metric_value_type must be int or double, got %q", m.ValueType)
	}
	o := g.Annotations.Ortel
	if o == nil {
		c.errorf(file, g.line, id, "missing annotations.ortel (source and default_enabled are required)")
		o = &rawOrtel{}
	}
	m.Upstream = o.Upstream
	m.Observable = o.Observable
	m.Source = o.Source
	m.SourceAttributes = o.SourceAttributes
	m.Buckets = o.ExplicitBucketBoundaries
	c.checkNamespace(file, g.line, id, m.Name, m.Upstream)
	if o.SpansOnly {
		c.errorf(file, g.line, id, "spans_only applies to attributes only")
	}
	if len(m.Source) == 0 {
		c.errorf(file, g.line, id, "missing annotations.ortel.source (the ortel package that emits it, e.g. instrument or receivers/cpu)")
	}
	c.checkSources(file, g.line, id, m.Source)
	if o.DefaultEnabled == nil {
		c.errorf(file, g.line, id, "missing annotations.ortel.default_enabled (true or false)")
	} else {
		m.DefaultEnabled = *o.DefaultEnabled
	}
	if m.Observable && m.Instrument == "histogram" {
		c.errorf(file, g.line, id, "a histogram cannot be observable")
	}
	if len(m.Buckets) > 0 {
		if m.Instrument != "histogram" {
			c.errorf(file, g.line, id, "explicit_bucket_boundaries apply to histograms only")
		}
		for i, b := range m.Buckets {
			if math.IsNaN(b) || math.IsInf(b, 0) {
				c.errorf(file, g.line, id, "bucket boundary %v is not a finite number", b)
			} else if i > 0 && b <= m.Buckets[i-1] {
				c.errorf(file, g.line, id, "explicit_bucket_boundaries must increase strictly: %v follows %v", b, m.Buckets[i-1])
			}
		}
	}
	// Value types: fractions, ratios, watts, joules, degrees and seconds
	// are never whole numbers.
	if m.ValueType == "int" {
		switch {
		case m.Unit == "W" || m.Unit == "J" || m.Unit == "Cel" || m.Unit == "s":
			c.errorf(file, g.line, id, "unit %q needs metric_value_type double (a Float64 instrument), not int", m.Unit)
		case m.Unit == "1" && m.Instrument == "gauge":
			c.errorf(file, g.line, id, "a gauge with unit \"1\" is a fraction or ratio and needs metric_value_type double, not int")
		}
	}
	return m
}

// checkIdents makes sure that every generated Go identifier is valid and
// unique, so that the generated code always compiles.
func (c *checker) checkIdents(reg *Registry) {
	type owner struct {
		file, name string
		line       int
	}
	idents := map[string]owner{}
	reported := map[[2]string]bool{}
	add := func(file string, line int, name, ident string) {
		if !validIdent(ident) {
			c.errorf(file, line, name, "name gives %q, which is not a valid exported Go identifier", ident)
			return
		}
		if reservedIdents[ident] {
			c.errorf(file, line, name, "name gives Go identifier %s, which package semconv reserves", ident)
			return
		}
		if prev, ok := idents[ident]; ok && prev.name != name {
			if pair := [2]string{prev.name, name}; !reported[pair] {
				reported[pair] = true
				c.errorf(file, line, name, "Go identifier %s is also generated for %q (%s:%d); rename one of them", ident, prev.name, prev.file, prev.line)
			}
			return
		}
		idents[ident] = owner{file, name, line}
	}
	for _, a := range reg.Attributes {
		add(a.File, a.Line, a.Name, a.GoName)
		add(a.File, a.Line, a.Name, a.GoName+"Key")
		for _, m := range a.Members {
			add(a.File, a.Line, a.Name+" member "+m.ID, m.GoName)
		}
	}
	for _, m := range reg.Metrics {
		for _, s := range []string{"Name", "Unit", "Description"} {
			add(m.File, m.Line, m.Name, m.GoName+s)
		}
		add(m.File, m.Line, m.Name, "New"+m.GoName)
	}
}

// examples normalises the examples field (a scalar or a list) to a list.
func examples(v any) []any {
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		return x
	default:
		return []any{x}
	}
}
