package semgen

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
)

// RenderDocs returns the Markdown metrics reference (docs/metrics.md).
func RenderDocs(reg *Registry) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "<!-- %s -->\n\n", Header)
	b.WriteString("# Metrics reference\n\n")
	b.WriteString("Every metric ortel emits, generated from the YAML registry in [`semconv/registry/`](../semconv/registry).\n")
	b.WriteString("To change this page, edit the registry and run `go generate ./semconv/...`.\n\n")
	b.WriteString("- **Origin** `upstream`: a name reused from the OpenTelemetry semantic conventions (v1.43.0), with its upstream\n")
	b.WriteString("  brief, instrument, unit and attributes; `ortel`: defined by ortel under `onnxruntime.*`, `nvidia.*` or `ortel.*`.\n")
	b.WriteString("- **Value** is the number type of the instrument: `int` (Int64) or `double` (Float64). Fractions, ratios, `W`, `J`,\n")
	b.WriteString("  `Cel` and `s` are always `double`, even where the upstream Go helpers make Int64 instruments.\n")
	b.WriteString("- **Default**: whether the emitting component turns the metric on when not configured otherwise.\n")
	b.WriteString("- **Async**: observed in a callback (an observable instrument) rather than recorded in line.\n\n")

	nss := namespaces(reg)
	b.WriteString("| Namespace | Metrics | Origin |\n|---|---|---|\n")
	for _, ns := range nss {
		fmt.Fprintf(&b, "| [`%s`](#%s) | %d | %s |\n", ns.name, anchor(ns.name), len(ns.metrics), ns.origin)
	}
	if len(reg.Receivers()) > 0 {
		b.WriteString("| [by receiver](#receivers) | | |\n")
	}
	b.WriteString("| [attributes](#attributes) | | |\n\n")

	for _, ns := range nss {
		fmt.Fprintf(&b, "## %s\n\n", ns.name)
		b.WriteString("| Metric | Instrument | Unit | Value | Attributes | Source | Default | Origin | Description |\n")
		b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
		for _, m := range ns.metrics {
			var attrs []string
			for _, ma := range m.Attributes {
				attrs = append(attrs, fmt.Sprintf("`%s` (%s)", ma.Attr.Name, levelText(ma)))
			}
			if len(attrs) == 0 {
				attrs = []string{"none"}
			}
			instr := m.Instrument
			if m.Observable {
				instr += " (async)"
			}
			desc := m.Brief
			if len(m.Buckets) > 0 {
				desc += " Buckets: " + floats(m.Buckets) + "."
			}
			if m.Note != "" {
				desc += " " + m.Note
			}
			src := make([]string, len(m.Source))
			for i, s := range m.Source {
				src[i] = "`" + s + "`"
			}
			fmt.Fprintf(&b, "| `%s` | %s | `%s` | %s | %s | %s | %s | %s | %s |\n",
				m.Name, instr, m.Unit, m.ValueType, cell(strings.Join(attrs, "<br>")), cell(strings.Join(src, "<br>")),
				yesNo(m.DefaultEnabled), origin(m.Upstream), cell(desc))
		}
		b.WriteString("\n")
	}

	writeReceiverDocs(&b, reg)

	b.WriteString("## Attributes\n\n")
	b.WriteString("| Attribute | Type | Origin | Used on | Description | Values / examples |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for _, a := range reg.Attributes {
		used := "spans"
		switch {
		case a.SpansOnly:
			used = "spans only"
		case len(a.UsedBy) > 0:
			used = fmt.Sprintf("metrics (%d) and spans", len(a.UsedBy))
		}
		var vals string
		if len(a.Members) > 0 {
			v := make([]string, len(a.Members))
			for i, m := range a.Members {
				v[i] = fmt.Sprintf("`%v`", m.Value)
			}
			vals = strings.Join(v, ", ")
		} else {
			vals = exampleList(a.Examples, true)
		}
		desc := a.Brief
		if a.Note != "" {
			desc += " " + a.Note
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n",
			a.Name, cell(a.Type), origin(a.Upstream), used, cell(desc), cell(vals))
	}
	return b.Bytes()
}

type namespace struct {
	name    string
	origin  string
	metrics []*Metric
}

// namespaces groups metrics by the first part of their names: ortel's own
// namespaces first, then the upstream ones, each sorted by name.
func namespaces(reg *Registry) []namespace {
	byName := map[string]*namespace{}
	var list []*namespace
	for _, m := range reg.Metrics {
		n := m.Name[:strings.IndexByte(m.Name, '.')]
		ns, ok := byName[n]
		if !ok {
			ns = &namespace{name: n, origin: origin(m.Upstream)}
			byName[n] = ns
			list = append(list, ns)
		}
		ns.metrics = append(ns.metrics, m)
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].origin != list[j].origin {
			return list[i].origin == "ortel"
		}
		return list[i].name < list[j].name
	})
	out := make([]namespace, len(list))
	for i, ns := range list {
		out[i] = *ns
	}
	return out
}

func origin(upstream bool) string {
	if upstream {
		return "upstream"
	}
	return "ortel"
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func anchor(s string) string {
	return strings.ToLower(strings.NewReplacer(".", "", " ", "-").Replace(s))
}

// cell makes text safe inside a Markdown table cell.
func cell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

// exampleList formats examples as a comma-separated list, each quoted for
// Go comments or in backticks for Markdown.
func exampleList(ex []any, markdown bool) string {
	s := make([]string, 0, len(ex))
	for _, e := range ex {
		var v string
		switch x := e.(type) {
		case []any:
			parts := make([]string, len(x))
			for i, p := range x {
				parts[i] = fmt.Sprintf("%q", fmt.Sprint(p))
			}
			v = "[" + strings.Join(parts, ", ") + "]"
		case string:
			v = fmt.Sprintf("%q", x)
		default:
			v = fmt.Sprint(x)
		}
		if markdown {
			v = "`" + v + "`"
		}
		s = append(s, v)
	}
	return strings.Join(s, ", ")
}
