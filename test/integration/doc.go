// Package integration holds the end-to-end tests of ortel's core slice: real
// ONNX Runtime, real models (PaddleOCR and generated ones), the instrument
// package and the telemetry wiring exporting over OTLP gRPC into a real
// in-process OTLP receiver. It has no non-test code.
package integration
