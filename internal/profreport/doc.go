// Package profreport turns ONNX Runtime profile files — the JSON that
// SessionOptions.EnableProfiling writes in Python, C#, C++, Java and
// Node.js, and the per-run files of run-level profiling (ONNX Runtime 1.25
// and later) — into ortel's run report (package report), so that `ortel
// report PROFILE.json` gives them the analysis, findings and every format a
// bench run gets.
//
// A profile holds what ONNX Runtime measured while profiling: each
// operator's time, shapes, sizes and (1.25+) memory readings, each profiled
// run's duration (its model_run event), and, in a session-level file, the
// session's loading and initialization. It does not hold the latency of
// unprofiled runs, the throughput, the machine, nor the ONNX Runtime
// version: the report leaves them out and its Source section says where
// each number came from.
//
// [Collector] is the aggregation of profiled operators that `ortel bench`'s
// profiling pass uses too, so a profile and a bench run are summarized by
// the same code. [Sniff] tells a profile from a report.json by content.
package profreport
