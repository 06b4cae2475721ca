// Package profimport turns ONNX Runtime profile files into OTLP spans and
// metrics without losing any: the conversion behind `ortel import`.
//
// A [Sink] takes spans in bounded batches and returns only once they are
// written (a file) or acknowledged (an OTLP endpoint, with retries), so the
// reader waits while the sink is busy; nothing goes through a span processor
// that drops when its queue fills. The counts Import returns are counts of
// spans the sink took.
//
// ONNX Runtime writes each event when it ends: a run's node events come
// before its model_run event, and a subgraph's nodes (with their nested
// SequentialExecutor::Execute) before the If, Loop or Scan node that ran
// them. Import groups them with profile.Grouper, the grouper ortel's live
// operator spans use too: it keeps the events of runs not yet closed in a
// bounded buffer and spills them to a temporary file beyond it, so memory
// stays flat whatever the size or the order of the input. When a model_run
// arrives, the events inside its interval (and on its thread) are nested
// and written: one trace per run, the run span as root, each operator a
// child of the run or of the node that ran its subgraph.
//
// What it emits:
//
//	| name                                | kind      | unit | attributes                                  |
//	|-------------------------------------|-----------|------|---------------------------------------------|
//	| span "run <model>"                  | span      |      | onnxruntime.model.name, onnxruntime.run.profiled, thread.id |
//	| span <op type>                      | span      |      | profile.Event.AppendNodeAttributes, AppendRunAttributes, thread.id |
//	| span <session event>                | span      |      | onnxruntime.model.name, thread.id           |
//	| onnxruntime.run.duration            | histogram | s    | onnxruntime.model.name, onnxruntime.run.profiled |
//	| onnxruntime.node.duration           | histogram | s    | model name, op type, execution provider (self time) |
//	| onnxruntime.run.memory.arena_peak   | histogram | By   | onnxruntime.model.name (ORT 1.25+ profiles)  |
//
// The resource of the spans and metrics describes the profiled process,
// not the importer: see [Resource].
package profimport
