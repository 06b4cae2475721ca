// Package liveview is ortel's live view: an in-process metric reader on the
// MeterProvider that exports, sampled at 12.5 Hz into a bounded history, and a
// small HTTP server that serves it as JSON, as a Server-Sent Events stream
// and as one self-contained page (no network access, canvas charts).
//
// Because the reader sits on the same MeterProvider as the exporter, the page
// and the backend read the same instruments and never disagree.
//
// What a snapshot (API version 1) reads:
//
//	| Field                     | From                                                        |
//	|---------------------------|-------------------------------------------------------------|
//	| runs.total                | onnxruntime.run.duration histogram count (all attributes)   |
//	| runs.p50/p95/p99_seconds  | run.duration bucket deltas over the sliding window          |
//	| runs.per_second           | runs ended in the window / window length                    |
//	| runs.in_flight            | onnxruntime.run.active                                      |
//	| runs.errors               | onnxruntime.run.errors                                      |
//	| sla.compliance            | share of the window's runs at or under the SLA threshold    |
//	| hardware.*                | system.cpu.utilization, system.memory.*, process.*,         |
//	|                           | hw.power, hw.energy, hw.gpu.utilization, hw.gpu.memory.usage|
//	| operators                 | onnxruntime.node.duration by onnxruntime.node.op_type       |
//	| phase                     | the bench's phase hook (SetPhase)                           |
//
// Percentiles come from histogram buckets (linear inside a bucket), so they
// are as fine as the instrument's bucket boundaries, like any backend's.
//
// Streaming uses Server-Sent Events rather than WebSocket: the stream is
// one-way, it is plain HTTP (any proxy, curl, the same auth as the REST
// calls), the browser's EventSource reconnects by itself, and it needs no
// dependency. Each client has a buffer of one frame: a client that has not
// taken the last frame has it replaced by the newest (a skipped frame), so a
// slow client never slows the program.
package liveview
