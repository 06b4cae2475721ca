// Package analysis turns a bench report into conclusions: why the model is
// slow, what to change, whether version B is really faster than A, and what
// one inference costs in joules and CO2.
//
//   - Roofline: OperatorFLOPs derives each operator's floating-point work
//     from the shapes ONNX Runtime's profiler recorded (MatMul, Gemm, Conv,
//     ConvTranspose, attention and ORT's fused and NCHWc variants,
//     element-wise ops, reductions, Softmax, normalizations); op types
//     whose work the shapes do not determine are counted as unknown, never
//     guessed. Roofline places every operator of a profiled run against the
//     machine's peaks: arithmetic intensity, achieved FLOP/s and bytes/s,
//     compute- or memory-bound, share of its roof.
//   - Peaks: MeasurePeaks runs a short microbenchmark through ONNX Runtime
//     itself on models from package onnxgen (a MatMul for FLOP/s;
//     element-wise chains for a bandwidth roof per memory level, at working
//     sets that fit each cache of CPU 0 (its sizes from sysfs, else CPUID,
//     else the knees of a bandwidth sweep; Peaks.Caches says which), and
//     beyond the last cache for DRAM, on one thread
//     and the default threads), cached per machine under the project cache
//     (peaks/<machine key>.json); flags override it. RooflineThreads
//     compares each node with the roof of the smallest level its bytes fit
//     in, and says why when a node is above it.
//   - Execution providers: Placement places the profiled run's nodes on
//     their providers (nodes and time per provider), lists the nodes that
//     fell back to the CPU while another provider was requested (by op
//     type; shape arithmetic excluded) and the Memcpy nodes ONNX Runtime
//     inserted between devices (count, bytes, time share, direction).
//   - Findings: Rules checks the facts of a run (profile, hardware, load
//     scenarios) and reports findings with their evidence and a
//     recommendation, ranked by severity and impact.
//   - Energy: joules per inference (total and above the idle baseline),
//     inferences per joule, power, GFLOP/s per watt and carbon at a grid
//     intensity (--grid-intensity, ORTEL_GRID_INTENSITY, default
//     DefaultGridIntensity).
//   - Compare: latency deltas per statistic with bootstrap confidence
//     intervals from the raw samples, a verdict, and a regression gate.
//
// Analyze computes a report's analysis section; Export emits it as
// telemetry. Since the profiled runs' spans have ended when the analysis
// runs, Export puts the findings on a span of its own, "analyze <model>",
// a child of the last profiled run (same trace) linked to every profiled
// run (the report's operators.run_spans), with one event
// "ortel.finding" per finding (attributes ortel.finding.rule, .severity,
// .impact, .title, .recommendation, .evidence).
//
// Export records these gauges (instrumentation scope ScopeName), once per
// analysis; energy metrics only when energy was measured:
//
//	metric                               instrument      unit       attributes
//	ortel.roofline.peak.compute          Float64Gauge    {flop}/s   -
//	ortel.roofline.peak.bandwidth        Float64Gauge    By/s       -
//	ortel.operator.compute.rate          Float64Gauge    {flop}/s   onnxruntime.model.name, onnxruntime.node.op_type, onnxruntime.execution_provider, ortel.roofline.bound
//	ortel.operator.memory.rate           Float64Gauge    By/s       (same)
//	ortel.operator.intensity             Float64Gauge    {flop}/By  (same)
//	ortel.operator.roof.utilization      Float64Gauge    1          (same)
//	ortel.finding.impact                 Float64Gauge    1          onnxruntime.model.name, ortel.finding.rule, ortel.finding.severity
//	ortel.inference.energy               Float64Gauge    J          onnxruntime.model.name, hw.id, hw.type, hw.name
//	ortel.inference.energy.dynamic       Float64Gauge    J          onnxruntime.model.name, hw.id, hw.type, hw.name
//	ortel.inference.power                Float64Gauge    W          onnxruntime.model.name, hw.id, hw.type, hw.name, ortel.power.aggregation
//	ortel.inference.efficiency           Float64Gauge    {run}/J    onnxruntime.model.name
//	ortel.inference.compute_efficiency   Float64Gauge    {flop}/J   onnxruntime.model.name
//	ortel.inference.carbon               Float64Gauge    g          onnxruntime.model.name
//	ortel.grid.carbon_intensity          Float64Gauge    g/kW.h     -
//
// The package never prints; what it could not do is said in the analysis'
// notes.
package analysis
