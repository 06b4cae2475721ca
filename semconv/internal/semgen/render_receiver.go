package semgen

import (
	"bytes"
	"fmt"
	"strings"
)

// ModulePath is the import path of the ortel module, which the generated
// receiver tables import package receivers and package semconv from.
const ModulePath = "github.com/ortel-dev/ortel"

// receiverRow is one metric of a receiver's table: the metric, the
// attributes of its own that the receiver sets, and all it sets (those
// and the receiver's point attributes).
type receiverRow struct {
	m   *Metric
	own []MetricAttribute
	all []MetricAttribute
}

func receiverRows(reg *Registry, r Receiver) []receiverRow {
	rows := make([]receiverRow, len(r.Metrics))
	for i, m := range r.Metrics {
		all := reg.AttributesOf(m, r.Source)
		rows[i] = receiverRow{m: m, own: all[:len(all)-len(reg.PointAttributes[r.Source])], all: all}
	}
	return rows
}

// pointSentence says which attributes every point of the receiver
// carries besides each metric's own, and why (the group's brief), or ""
// when there are none.
func pointSentence(reg *Registry, r Receiver, quote func(string) string) string {
	pa := reg.PointAttributes[r.Source]
	if len(pa) == 0 {
		return ""
	}
	parts := make([]string, len(pa))
	for i, ma := range pa {
		switch ma.Level {
		case "required":
			parts[i] = quote(ma.Attr.Name)
		case "conditionally_required":
			parts[i] = fmt.Sprintf("%s (%s)", quote(ma.Attr.Name), ma.Condition)
		default:
			parts[i] = fmt.Sprintf("%s (%s)", quote(ma.Attr.Name), levelText(ma))
		}
	}
	return sentence("Every point also carries "+strings.Join(parts, ", ")+".") + " " + reg.PointBriefs[r.Source]
}

func attrNames(list []MetricAttribute, quote func(string) string) string {
	s := make([]string, len(list))
	for i, ma := range list {
		s[i] = quote(ma.Attr.Name)
	}
	return strings.Join(s, ", ")
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// RenderReceiver returns the Go source of the generated table of receiver
// package r (receivers/<name>/metrics_gen.go): a Metrics function listing
// what the receiver emits, with the table in its doc comment.
func RenderReceiver(reg *Registry, r Receiver) ([]byte, error) {
	rows := receiverRows(reg, r)
	var b bytes.Buffer
	fmt.Fprintf(&b, "// %s\n\npackage %s\n\nimport (\n", Header, r.Package)
	usesAttrs := false
	for _, row := range rows {
		usesAttrs = usesAttrs || len(row.all) > 0
	}
	if usesAttrs {
		b.WriteString("\t\"go.opentelemetry.io/otel/attribute\"\n\n")
	}
	fmt.Fprintf(&b, "\t%q\n\t%q\n)\n\n", ModulePath+"/receivers", ModulePath+"/semconv")

	comment(&b, "", fmt.Sprintf("Metrics returns the metrics the receiver can emit, from the semconv registry (semconv/registry): every metric whose annotations.ortel.source names %s, with the attributes this receiver sets on its points. Those off by default are read only when WithMetric or WithAllMetrics turns them on. Each call returns a new slice.", r.Source))
	b.WriteString("//\n")
	plain := func(s string) string { return s }
	table := [][]string{{"Metric", "Instrument", "Unit", "Attributes", "Default"}}
	for _, row := range rows {
		table = append(table, []string{row.m.Name, row.m.Kind(), row.m.Unit, attrNames(row.own, plain), onOff(row.m.DefaultEnabled)})
	}
	writeAligned(&b, table)
	if s := pointSentence(reg, r, plain); s != "" {
		b.WriteString("//\n")
		comment(&b, "", s)
	}
	b.WriteString("func Metrics() []receivers.Metric {\n\treturn []receivers.Metric{\n")
	for _, row := range rows {
		m := row.m
		fmt.Fprintf(&b, "\t\t{Name: semconv.%sName, Kind: %q, Unit: semconv.%sUnit, Description: semconv.%sDescription, DefaultEnabled: %t",
			m.GoName, m.Kind(), m.GoName, m.GoName, m.DefaultEnabled)
		var all, required []string
		for _, ma := range row.all {
			all = append(all, "semconv."+ma.Attr.GoName+"Key")
			if ma.Level == "required" {
				required = append(required, "semconv."+ma.Attr.GoName+"Key")
			}
		}
		if len(all) > 0 {
			fmt.Fprintf(&b, ",\n\t\t\tAttributes: []attribute.Key{%s}", strings.Join(all, ", "))
		}
		if len(required) > 0 {
			fmt.Fprintf(&b, ",\n\t\t\tRequired: []attribute.Key{%s}", strings.Join(required, ", "))
		}
		b.WriteString("},\n")
	}
	b.WriteString("\t}\n}\n")
	return gofmt(r.Source+"/metrics_gen.go", b.Bytes())
}

// writeAligned writes rows as a preformatted Markdown table inside a doc
// comment, each column padded to its widest cell.
func writeAligned(b *bytes.Buffer, rows [][]string) {
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], len(c))
		}
	}
	line := func(cells []string) {
		b.WriteString("//\t|")
		for i, c := range cells {
			fmt.Fprintf(b, " %-*s |", widths[i], c)
		}
		b.WriteString("\n")
	}
	line(rows[0])
	b.WriteString("//\t|")
	for _, w := range widths {
		b.WriteString(strings.Repeat("-", w+2) + "|")
	}
	b.WriteString("\n")
	for _, r := range rows[1:] {
		line(r)
	}
}

// writeReceiverDocs writes the Receivers section of docs/metrics.md: one
// table per receiver package, the same as its Metrics function.
func writeReceiverDocs(b *bytes.Buffer, reg *Registry) {
	rs := reg.Receivers()
	if len(rs) == 0 {
		return
	}
	code := func(s string) string { return "`" + s + "`" }
	b.WriteString("## Receivers\n\n")
	b.WriteString("What each receiver package emits, with the attributes it sets on the points: the metric's own\n")
	b.WriteString("(where a receiver sets fewer than the definition above lists, `annotations.ortel.source_attributes`\n")
	b.WriteString("says which) and those it sets on every point. The package's generated `Metrics()` returns the same table.\n\n")
	for _, r := range rs {
		fmt.Fprintf(b, "### %s\n\n", r.Source)
		b.WriteString("| Metric | Instrument | Unit | Attributes | Default |\n|---|---|---|---|---|\n")
		for _, row := range receiverRows(reg, r) {
			attrs := attrNames(row.own, code)
			if attrs == "" {
				attrs = "none"
			}
			fmt.Fprintf(b, "| `%s` | %s | `%s` | %s | %s |\n", row.m.Name, row.m.Kind(), row.m.Unit, cell(attrs), onOff(row.m.DefaultEnabled))
		}
		b.WriteString("\n")
		if s := pointSentence(reg, r, code); s != "" {
			b.WriteString(cell(s) + "\n\n")
		}
	}
}
