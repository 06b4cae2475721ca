// Package profile reads the profile JSON that ONNX Runtime writes when
// profiling is enabled (SessionOptions.EnableProfiling), fast and in
// constant memory, so that files of hundreds of megabytes turn into operator
// spans without being loaded whole.
//
// The profile is a Chrome trace: a JSON array of complete ("ph":"X") events,
// or an object holding that array under "traceEvents". Each Run of a session
// yields one "model_run" and one "SequentialExecutor::Execute" event
// (category "Session") and, per graph node, one "<node>_kernel_time" event
// (category "Node") whose args name the operator, the execution provider,
// the input and output shapes, the tensor sizes and how the intra-op thread
// pool ran it. ts and dur are microseconds since profiling started.
//
// [Reader] streams the events one at a time through a reused buffer and a
// hand-written scanner: no reflection, no per-event allocation once the
// strings it meets repeat (they are interned, in a bounded table), and
// unknown keys are skipped at every level, so newer ONNX Runtime versions
// and other execution providers read fine. [ReadFile] wraps it for a path.
//
// ONNX Runtime has written invalid JSON before. Where the meaning is still
// unambiguous the Reader repairs it and records a [Warning]: trailing commas,
// raw control characters and invalid UTF-8 inside strings (the latter
// replaced by U+FFFD), a '"' inside a name that is not followed by ',' ':'
// '}' or ']', and a backslash that starts no valid escape. Where it is not
// (a truncated file, a missing value, garbage), Next returns a [*SyntaxError]
// with the byte offset and a plain-words message; the events returned before
// it were read whole, so a caller streaming them keeps what it has. An input with no JSON at all gives [ErrEmpty].
//
// ONNX Runtime writes each event when it ends, so the nodes of an If, Loop
// or Scan subgraph (with inlined names such as
// "If_0_then_branch__Inline_0__/decoder/Cast") come flat, before the node
// that ran them, each subgraph run marked by a nested
// SequentialExecutor::Execute event. [Nest] rebuilds that tree from the
// intervals and gives each node its self time, so statistics count every
// microsecond once. ONNX Runtime 1.25 and later add allocator readings to
// each node (the mem_* args), read into [Event].Memory.
//
// [Grouper] gathers the events of a profile read as a stream into runs:
// each model_run with the events it encloses, matched by interval and
// thread (concurrent runs stay apart), nested, with a bounded memory (held
// events past a limit go to a temporary file). [Event.AppendNodeAttributes]
// and [Event.AppendRunAttributes] give a node event's span attributes in
// ortel's conventions. ortel's live operator spans (package instrument) and
// `ortel import` are both built on them; this package emits no telemetry of
// its own.
package profile
