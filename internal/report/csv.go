package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// CSV tables. Each is one rectangular table with a header row.
const (
	// CSVSummary: section,name,value,unit — every scalar of the report
	// (latency, throughput, generation, cold start, peaks, roofline totals,
	// energy).
	CSVSummary = "summary"
	// CSVSamples: run,latency_s — every measured latency in run order.
	CSVSamples = "samples"
	// CSVOpTypes: the operator profile per op type, joined with the
	// roofline per op type.
	CSVOpTypes = "op-types"
	// CSVNodes: every operator of the profiled run with shapes, sizes and
	// its roofline point.
	CSVNodes = "nodes"
	// CSVFindings: rank,rule,severity,impact,title,detail,recommendation,evidence.
	CSVFindings = "findings"
)

// CSVTables lists the tables WriteCSV writes.
func CSVTables() []string {
	return []string{CSVSummary, CSVSamples, CSVOpTypes, CSVNodes, CSVFindings}
}

// WriteCSV writes one table of the report as CSV (RFC 4180). Numbers are
// in base units (seconds, bytes, FLOP/s) with full precision; a value that
// was not measured is an empty cell.
func WriteCSV(w io.Writer, r *Report, table string) error {
	cw := csv.NewWriter(w)
	var err error
	switch table {
	case CSVSummary:
		err = csvSummary(cw, r)
	case CSVSamples:
		err = cw.Write([]string{"run", "latency_s"})
		for i, s := range r.Latency.Samples {
			if err != nil {
				break
			}
			err = cw.Write([]string{strconv.Itoa(i), num(s)})
		}
	case CSVOpTypes:
		err = csvOpTypes(cw, r)
	case CSVNodes:
		err = csvNodes(cw, r)
	case CSVFindings:
		err = csvFindings(cw, r)
	default:
		return fmt.Errorf("no CSV table %q (tables: %s)", table, strings.Join(CSVTables(), ", "))
	}
	if err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func optCell(v *float64) string {
	if v == nil {
		return ""
	}
	return num(*v)
}

func csvSummary(cw *csv.Writer, r *Report) error {
	rows := [][]string{{"section", "name", "value", "unit"}}
	add := func(sec, name string, v float64, unit string) {
		rows = append(rows, []string{sec, name, num(v), unit})
	}
	addS := func(sec, name, v string) { rows = append(rows, []string{sec, name, v, ""}) }
	addS("model", "name", r.Model.Name)
	addS("model", "sha256", r.Model.SHA256)
	addS("runtime", "ort_version", r.Runtime.ORTVersion)
	addS("runtime", "execution_providers", strings.Join(r.Runtime.Providers, " "))
	addS("host", "cpu_model", r.Host.CPUModel)
	add("host", "logical_cpus", float64(r.Host.LogicalCPUs), "{cpu}")
	add("config", "batch", float64(r.Config.Batch), "{item}")
	add("config", "intra_op_threads", float64(r.Config.IntraOpThreads), "{thread}")
	add("session", "creation", r.Session.CreationS, "s")
	add("session", "first_run", r.Session.FirstRunS, "s")
	l := r.Latency
	add("latency", "count", float64(l.Count), "{run}")
	add("latency", "errors", float64(l.Errors), "{run}")
	for _, q := range []struct {
		n string
		v float64
	}{{"min", l.Min}, {"mean", l.Mean}, {"std", l.Std}, {"p50", l.P50}, {"p90", l.P90}, {"p95", l.P95}, {"p99", l.P99}, {"p99.9", l.P999}, {"max", l.Max}} {
		add("latency", q.n, q.v, "s")
	}
	add("throughput", "runs_per_s", r.Throughput.RunsPerS, "{run}/s")
	add("throughput", "items_per_s", r.Throughput.ItemsPerS, "{item}/s")
	add("throughput", "wall", r.Throughput.WallS, "s")
	rows = append(rows, generationCSVRows(r.Generation)...)
	if o := r.Operators; o != nil {
		add("operators", "profiled_runs", float64(o.ProfiledRuns), "{run}")
		add("operators", "nodes_per_run", float64(o.Nodes), "{node}")
		add("operators", "total", o.TotalS, "s")
	}
	if a := r.Analysis; a != nil {
		if pk := a.Peaks; pk != nil {
			add("peaks", "flops_per_s", pk.FLOPsPerS, "{flop}/s")
			add("peaks", "bytes_per_s", pk.BytesPerS, "By/s")
			add("peaks", "ridge", pk.Ridge, "{flop}/By")
			addS("peaks", "flops_source", pk.FLOPsSource)
			addS("peaks", "bytes_source", pk.BytesSource)
		}
		if rf := a.Roofline; rf != nil {
			add("roofline", "flops", rf.FLOPs, "{flop}")
			add("roofline", "bytes", rf.Bytes, "By")
			add("roofline", "time", rf.TimeS, "s")
			add("roofline", "known_time_share", rf.KnownTimeShare, "1")
		}
		if pl := a.Providers; pl != nil {
			for _, row := range pl.summaryRows() {
				rows = append(rows, append([]string{"providers"}, row...))
			}
		}
		add("findings", "count", float64(len(a.Findings)), "{finding}")
		if len(a.Findings) > 0 {
			addS("findings", "top_rule", a.Findings[0].Rule)
		}
		e := a.Energy
		addS("energy", "available", strconv.FormatBool(e.Available))
		if !e.Available {
			addS("energy", "reason", e.Reason)
		} else {
			add("energy", "joules_per_inference", e.JoulesPerInference, "J")
			if e.DynamicJoulesPerInference != nil {
				add("energy", "dynamic_joules_per_inference", *e.DynamicJoulesPerInference, "J")
			}
			add("energy", "inferences_per_joule", e.InferencesPerJoule, "{run}/J")
			add("energy", "avg_power", e.AvgW, "W")
			add("energy", "max_power", e.MaxW, "W")
			if e.GFLOPsPerWatt != nil {
				add("energy", "gflops_per_watt", *e.GFLOPsPerWatt, "G{flop}/s/W")
			}
			for _, s := range e.Sources {
				add("energy", s.Name+".joules_per_inference", s.JoulesPerInference, "J")
				add("energy", s.Name+".avg_power", s.AvgW, "W")
			}
		}
		add("carbon", "grid_intensity", e.Carbon.GridIntensity, "g/kW.h")
		addS("carbon", "grid_intensity_source", e.Carbon.GridSource)
		if e.Carbon.GramsPerInference != nil {
			add("carbon", "per_inference", *e.Carbon.GramsPerInference, "g")
		}
	}
	return cw.WriteAll(rows)
}

func csvOpTypes(cw *csv.Writer, r *Report) error {
	if err := cw.Write([]string{"op_type", "provider", "calls", "total_s", "share", "mean_s",
		"nodes_per_run", "unknown_nodes", "flops", "bytes", "intensity", "flops_per_s", "bytes_per_s", "bound", "roof_share"}); err != nil {
		return err
	}
	if r.Operators == nil {
		return nil
	}
	roof := map[[2]string]RooflineOpType{}
	if r.Analysis != nil && r.Analysis.Roofline != nil {
		for _, t := range r.Analysis.Roofline.ByOpType {
			roof[[2]string{t.OpType, t.Provider}] = t
		}
	}
	for _, t := range r.Operators.ByType {
		row := []string{t.OpType, t.Provider, strconv.Itoa(t.Calls), num(t.TotalS), num(t.Share), num(t.MeanS)}
		if rt, ok := roof[[2]string{t.OpType, t.Provider}]; ok {
			row = append(row, strconv.Itoa(rt.Nodes), strconv.Itoa(rt.UnknownNodes), optCell(rt.FLOPs), num(rt.Bytes), optCell(rt.Intensity),
				optCell(rt.FLOPsPerS), num(rt.BytesPerS), rt.Bound, optCell(rt.RoofShare))
		} else {
			row = append(row, "", "", "", "", "", "", "", "", "")
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	return nil
}

func csvNodes(cw *csv.Writer, r *Report) error {
	if err := cw.Write([]string{"index", "name", "op_type", "provider", "start_s", "dur_s", "input_shapes", "output_shapes",
		"activation_bytes", "parameter_bytes", "output_bytes", "threads", "thread_imbalance",
		"class", "flops", "intensity", "flops_per_s", "bytes_per_s", "bound", "roof_share", "unknown_reason",
		"roof", "roof_bytes_per_s", "above_roof"}); err != nil {
		return err
	}
	if r.Operators == nil {
		return nil
	}
	var ops []RooflineOp
	if r.Analysis != nil && r.Analysis.Roofline != nil && len(r.Analysis.Roofline.Ops) == len(r.Operators.Timeline) {
		ops = r.Analysis.Roofline.Ops
	}
	for i, n := range r.Operators.Timeline {
		row := []string{strconv.Itoa(i), n.Name, n.OpType, n.Provider, num(n.StartS), num(n.DurS),
			strings.Join(n.InputShapes, " "), strings.Join(n.OutputShapes, " "),
			strconv.FormatInt(n.ActivationSize, 10), strconv.FormatInt(n.ParameterSize, 10), strconv.FormatInt(n.OutputSize, 10),
			strconv.Itoa(n.Threads), num(n.Imbalance)}
		if ops != nil {
			o := ops[i]
			row = append(row, o.Class, optCell(o.FLOPs), optCell(o.Intensity), optCell(o.FLOPsPerS), num(o.BytesPerS), o.Bound, optCell(o.RoofShare), o.Unknown,
				o.Roof, roofCell(o.RoofBytesPerS), o.AboveRoof)
		} else {
			row = append(row, "", "", "", "", "", "", "", "", "", "", "")
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	return nil
}

func csvFindings(cw *csv.Writer, r *Report) error {
	if err := cw.Write([]string{"rank", "rule", "severity", "impact", "title", "detail", "recommendation", "evidence"}); err != nil {
		return err
	}
	if r.Analysis == nil {
		return nil
	}
	for i, f := range r.Analysis.Findings {
		if err := cw.Write([]string{strconv.Itoa(i + 1), f.Rule, f.Severity, num(f.Impact), f.Title, f.Detail, f.Recommendation, evidenceLine(f.Evidence)}); err != nil {
			return err
		}
	}
	return nil
}

// roofCell is a roof's bandwidth, empty when there is none.
func roofCell(v float64) string {
	if v <= 0 {
		return ""
	}
	return num(v)
}
