// Package otlpjson reads and writes the OTLP/JSON lines format: one OTLP
// export request per line, as the OpenTelemetry Collector's file exporter
// writes it and its otlpjsonfile receiver reads it.
//
// ortel writes its replayable traces.jsonl and metrics.jsonl files in this
// format when no collector is configured (the embedded default of package
// internal/telemetry), so a run can later be replayed into any collector.
//
// Each line is one ExportTraceServiceRequest or ExportMetricsServiceRequest
// in the OTLP JSON encoding of the OTLP specification:
//
//   - field names in lowerCamelCase ("resourceSpans", "startTimeUnixNano");
//   - enum values as integers ("kind": 2);
//   - 64-bit integers as decimal strings ("startTimeUnixNano": "1544712660000000000");
//   - traceId, spanId and parentSpanId (also in span links and metric
//     exemplars) as lowercase hexadecimal strings, not base64 as the generic
//     protobuf JSON mapping would write them.
//
// Readers follow the specification's robustness rules: unknown fields are
// ignored, field names may also be in snake_case, enums may be names,
// 64-bit integers may be JSON numbers, hex ids may be upper case, blank
// lines are skipped. Errors name the line number.
//
// Files are crash-consistent, with the format kept as is (no framing of
// ours, so the collector, jq and any OTLP/JSON reader still read them): an
// Appender writes each record as one whole line, undoes a write that fails
// (a full disk) by truncating back to the last whole record, retries for
// a moment when space runs out and tries every later record afresh, and
// repairs on opening the cut last line a crash left. Readers skip and count
// a damaged record (a line that does not decode: cut short, zero-filled by
// a power loss) instead of stopping at it, and a Scanner gives each line's
// byte offsets to a reader that records how far it got (ortel replay).
// JSON needs no checksum against this damage: a record is one object that
// closes only at its last byte, and NUL or other control bytes are invalid
// anywhere in JSON, so a cut, zero-filled or spliced record never decodes.
// (A checksum would also catch bits flipped inside a value by failing
// media, which is the file system's business.)
//
// The package emits no telemetry.
package otlpjson
