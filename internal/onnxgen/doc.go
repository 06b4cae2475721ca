// Package onnxgen builds small ONNX models from Go code, for ortel's tests,
// benchmarks and the built-in peak microbenchmark.
//
// It has two layers:
//
//   - a generic builder: describe a [Graph] (inputs, outputs, [Node]s,
//     initializer [Tensor]s) inside a [Model] and call [Model.Marshal] or
//     [Model.WriteFile]. The ONNX protobuf is encoded by hand with protowire,
//     so the package needs no generated ONNX code. Before encoding, the graph
//     is checked: every node input must be produced by a graph input, an
//     initializer or an earlier node, no value may be produced twice, and
//     tensor data must match its shape; the errors name the node and value
//     at fault.
//   - ready-made models with deterministic weights (a seeded PRNG, small
//     values): [MatMulAddChain], [DynamicBatch], [ElementwiseChain] and
//     [Conv] for profiling and instrumentation tests, [LargeMatMul]
//     (compute-bound) and [Bandwidth] (memory-bound) for peak FLOP/s and
//     bytes/s, and [Decoder], a real prefill+decode language-model graph with
//     a KV cache in the Hugging Face/Optimum input/output convention, for
//     time-to-first-token and time-per-output-token measurements; options
//     lay it out as a merged decoder (use_cache_branch), with position_ids,
//     or as a Whisper-style decoder with cross attention.
//
// Models use IR version 8 and opset 17 of the default domain unless told
// otherwise, which ONNX Runtime 1.24 loads.
//
// A constructor given impossible arguments (for example a chain of zero
// layers) does not panic: it returns a Model whose Marshal, WriteFile and
// Validate report the problem.
//
// The package emits no telemetry.
package onnxgen
