package report_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/internal/analysis"
	"github.com/ortel-dev/ortel/internal/report"
)

// gpuPlacementReport is a report whose profiled run asked for the CUDA
// provider: a Conv and a Gemm on CUDA, a NonZero that fell back to the CPU,
// a shape node on the CPU, and the two copies around the fallback.
func gpuPlacementReport() *report.Report {
	const cuda = "CUDAExecutionProvider"
	n := func(name, op, prov string, start, d float64, out string, size int64) report.NodeTiming {
		return report.NodeTiming{Name: name, OpType: op, Provider: prov, StartS: start, DurS: d, OutputShapes: []string{out}, OutputSize: size, ActivationSize: size}
	}
	tl := []report.NodeTiming{
		n("/conv", "Conv", cuda, 0, 4e-3, "float[1,16,64,64]", 262144),
		n("Memcpy_token_3", "MemcpyToHost", cuda, 4e-3, 1e-3, "float[1,16,64,64]", 262144),
		n("/nonzero", "NonZero", analysis.CPUProvider, 5e-3, 2e-3, "int64[2,100]", 1600),
		n("/shape", "Shape", analysis.CPUProvider, 7e-3, 1e-5, "int64[4]", 32),
		n("Memcpy_token_4", "MemcpyFromHost", cuda, 7.1e-3, 0.5e-3, "float[1,16,64,64]", 262144),
		n("/gemm", "Gemm", cuda, 7.6e-3, 2.49e-3, "float[1,10]", 40),
	}
	// NonZero's int64 output would read as shape arithmetic; give it a
	// float output as a fallback that is not.
	tl[2].OutputShapes = []string{"float[2,100]"}
	req := []string{cuda, analysis.CPUProvider}
	return &report.Report{
		SchemaVersion: report.SchemaVersion,
		Runtime:       report.Runtime{ORTVersion: "1.30.0", Providers: req},
		Model:         report.Model{Name: "gpu"},
		Operators:     &report.Operators{ProfiledRuns: 1, Nodes: len(tl), Timeline: tl},
		Analysis:      &report.Analysis{Providers: analysis.Placement(req, tl)},
	}
}

func TestPlacementRendered(t *testing.T) {
	r := gpuPlacementReport()
	var text, md, html bytes.Buffer
	if err := report.WriteAnalysisText(&text, r); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteMarkdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteHTML(&html, r); err != nil {
		t.Fatal(err)
	}
	var csvOut bytes.Buffer
	if err := report.WriteCSV(&csvOut, r, report.CSVSummary); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		format, got string
		want        []string
	}{
		{"text", text.String(), []string{
			"Execution providers (one profiled run: 6 nodes, 10.00ms in operators; requested CUDAExecutionProvider, CPUExecutionProvider)",
			"CUDA      4      7.99ms   79.9%",
			"CPU fallback: 1 node, 2.00ms (20.0% of operator time): NonZero ×1 (2.00ms); 1 shape node on the CPU by design",
			"memory copies: 2 nodes, 512.0 KiB, 1.50ms (15.0% of operator time)",
			"MemcpyToHost    device → host  CUDA      1      256.0 KiB  1.00ms    10.0%  262.14 MB/s",
		}},
		{"markdown", md.String(), []string{
			"## Execution providers",
			"| CUDA | 4 | 7.99ms | 79.9% |",
			"CPU fallback: 1 node, 2.00ms (20.0% of operator time): NonZero ×1 (2.00ms). Shape arithmetic on the CPU by design, not counted: 1 node.",
			"| MemcpyFromHost | host → device | CUDA | 1 | 256.0 KiB | 500.0µs | 5.0% | 524.29 MB/s |",
		}},
		{"csv", csvOut.String(), []string{
			"providers,nodes.CUDAExecutionProvider,4,{node}",
			"providers,fallback_nodes,1,{node}",
			"providers,copy_bytes,524288,By",
		}},
		{"html", html.String(), []string{
			`<section id="providers">`,
			`<td class="l">NonZero</td><td>1</td><td>2.00ms</td><td>20.0%</td>`,
			`<td class="l">Memcpy_token_3</td><td class="l">MemcpyToHost</td><td class="l">float[1,16,64,64]</td><td>256.0 KiB</td>`,
		}},
	} {
		for _, w := range tc.want {
			if !strings.Contains(tc.got, w) {
				t.Errorf("%s report lacks %q:\n%s", tc.format, w, tc.got)
			}
		}
	}
}
