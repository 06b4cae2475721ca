// Package ortenv is ortel's internal name for the public loader
// github.com/ortel-dev/ortel/instrument/ortlib, which finds the ONNX Runtime
// shared library and initializes the environment once per process. New code,
// and every example, should use ortlib directly.
package ortenv
