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
// The package emits no telemetry.
package otlpjson
