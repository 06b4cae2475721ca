// Package attach instruments running processes that use ONNX Runtime,
// without changing them: eBPF uprobes on ONNX Runtime's C API turn every
// Run into a run span and the metrics the in-process instrumentation
// (package instrument) records, under the same names, so the same
// dashboards and queries work for both. It is what `ortel attach` runs.
//
// # How it finds the functions
//
// ONNX Runtime's shared library is stripped: it exports OrtGetApiBase and
// little else, so Run cannot be found by name. Resolve loads the same file
// into this process, calls OrtGetApiBase()->GetApi(N) (N is the library's
// own API version), reads the function pointers at their indexes in the
// published OrtApi struct (append-only, so the indexes hold for every
// version), subtracts the load base and converts each address into a file
// offset through the ELF program headers. Results are cached by GNU build
// id. A function that starts with endbr64 is probed one instruction later:
// the kernel single-steps endbr64 out of line (an extra trap, ~12 µs in a
// VM here) but emulates the push that follows.
//
// # What the probes do
//
// Entry probes on Run, RunWithBinding, CreateSession and
// CreateSessionFromArray store the start time (the kernel's
// CLOCK_MONOTONIC) and the arguments per thread; return probes read the
// returned OrtStatus* (NULL is success; otherwise the status's error code
// becomes error.type), the session (Run's first argument, or what
// CreateSession wrote to its OrtSession** out) and, for CreateSession, the
// model path, and send one event through a ring buffer. ReleaseSession
// forgets a session, so a reused address is not mistaken for it. The
// programs are C (bpf/probes.bpf.c), compiled by cilium/ebpf's bpf2go into
// one object per architecture, since the registers that hold a function's
// arguments differ (bpf_x86_bpfel.o for amd64, bpf_arm64_bpfel.o for
// arm64). The objects are committed and embedded: building ortel needs no
// C compiler, and the programs need no kernel BTF (they use no CO-RE
// relocations). `make ebpf` regenerates them with clang 14; CI's `make
// ebpf-check` fails when they are not what the C compiles to.
//
// # What it emits
//
//	name                                   instrument       unit  attributes
//	run span "run MODEL" (or "run")        span                   onnxruntime.model.name, onnxruntime.session.id, process.pid, process.executable.name, process.runtime.name, error.type
//	create_session span                    span                   the same
//	onnxruntime.run.duration               Float64Histogram s     onnxruntime.model.name, onnxruntime.run.profiled (false), process.*, error.type on failure
//	onnxruntime.runs                       Int64ObservableCounter {run} onnxruntime.model.name, process.*
//	onnxruntime.run.errors                 Int64Counter     {error} onnxruntime.model.name, process.*, error.type
//	onnxruntime.run.active                 Int64ObservableUpDownCounter {run} onnxruntime.model.name, process.*
//	onnxruntime.session.creation.duration  Float64Histogram s     onnxruntime.model.name, process.*
//
// The model name comes from CreateSession's path (instrument.ModelName),
// so it is known for sessions created after attach. A session created
// before attach is still identified (onnxruntime.session.id is
// "PID:0xADDRESS", the OrtSession's address) but its model is not: the
// path is not kept anywhere attach can read without knowing ORT's private
// C++ layout. Its runs are named "run" and carry no model name.
//
// The target's process attributes go on every span and metric point, not
// on the resource: one attach may watch several processes, and the
// resource describes ortel itself. "process.*" above includes, for a
// target in a container, k8s.pod.uid and container.id read from its
// /proc/PID/cgroup (and k8s.pod.name and k8s.namespace.name when it runs in
// attach's own pod; see receivers/podattr): runs are attributed to pods
// with no new series, since each process has its own already.
//
// # A fleet: every process of a node
//
// NewFleet is what `ortel agent --discover --attach` runs: one set of
// loaded programs and one ring buffer for a node, probes added per process
// (Add, as discovery finds it) and removed (Remove, when it exits), with
// bounds on what they cost:
//
//   - Limits: probes per process (9 per library) and per node, refused
//     past them (ErrProcessLimit; ErrNodeLimit waits for room); runs per
//     second per process and per node that become spans and histogram
//     points, the rest counted in onnxruntime.runs and shed (Stats.Shed).
//   - WithSpanRatio: the share of runs that get a span (evenly spread);
//     the metrics count every run seen.
//   - WithDutyCycle: a uprobe traps into the kernel on every call it is
//     on, whatever is sampled (a few µs, most of it the kernel's own
//     uprobe+uretprobe cost), so the probes are attached for ON of every
//     PERIOD and removed the rest. The counts stay honest as estimates:
//     onnxruntime.runs and onnxruntime.run.errors report what was seen
//     divided by the share ON/PERIOD, and carry it as
//     onnxruntime.run.sampled_share, so a query can tell an estimate from
//     a count (and multiply back); onnxruntime.run.duration is not scaled:
//     its points are the runs seen, a sample of each period's first ON,
//     whose quantiles stand for the process's while its load holds.
//     onnxruntime.run.active is reported only while the probes are on.
//
// # What it cannot see
//
// Python: the onnxruntime Python package calls ORT's C++ classes directly,
// not the C API table, so its runs never reach the probes; FindTarget
// refuses such a process (ErrPython). With process ids, only libraries
// mapped when attach starts are probed; WithLibrary probes a library file
// in every process, present and future.
package attach
