// Package ortenv finds the ONNX Runtime shared library and initializes the
// ONNX Runtime environment once per process, for ortel's commands, examples
// and tests.
//
// The library is looked for, in order:
//
//  1. the file named by ONNXRUNTIME_SHARED_LIBRARY_PATH;
//  2. the project cache: $ORTEL_CACHE_DIR/onnxruntime/<version>/, where
//     ORTEL_CACHE_DIR defaults to the .cache/ortel folder of the enclosing
//     ortel checkout, then to $XDG_CACHE_HOME/ortel (~/.cache/ortel);
//  3. the system library paths (LD_LIBRARY_PATH, /usr/local/lib, /usr/lib, ...).
//
// When none of these holds the library, the error lists every place that was
// looked at and the command that fetches it (make setup).
package ortenv
