// Package discover finds the processes on a host that run ONNX Runtime, for
// ortel agent --discover: every process whose memory map holds an ONNX
// Runtime library (a mapped ELF file exporting OrtGetApiBase, whatever its
// name: libonnxruntime.so, a copy bundled by a Node.js or Java package, a
// static build into the executable) or ONNX Runtime's Python binding
// (onnxruntime_pybind11_state*.so).
//
// A Scanner lists them once; a Tracker scans again and again and says what
// changed since the previous scan: processes that started running ONNX
// Runtime, and processes that exited (or no longer map it). A process is
// known by its id and its start time, so a process id the kernel reuses
// for another process is an exit and a start, not the same process.
//
// The maps are read the way ortel attach reads them (internal/attach:
// ParseMaps, IsORTLibrary); only files mapped executable are checked, and
// each file is checked once while it stays mapped somewhere (by device,
// inode and path), so a rescan reads every process's maps but opens no
// library it has seen. A process whose maps cannot be read (another
// user's, without CAP_SYS_PTRACE) is skipped and counted.
//
// Paths are under a host root (ORTEL_HOST_ROOT for the agent, "/" by
// default): an agent in a container with the host's file system mounted
// at /host reads /host/proc, and opens each library through
// /host/proc/PID/root, so a process in another mount namespace works too.
package discover
