// The uprobes `ortel attach` puts on ONNX Runtime's C API. Compiled by
// bpf2go (see probes_linux.go's go:generate line) into bpf_x86_bpfel.o and
// bpf_arm64_bpfel.o, which are committed: building ortel needs no clang.
// After a change here, run `make ebpf` (clang 14, as CI's `make ebpf-check`
// compares the objects byte for byte).
//
// What the programs do:
//
//   - on entry to Run, RunWithBinding and CreateSession(FromArray): store
//     {start time, three arguments} in a hash map keyed by the thread;
//   - on return: look the thread up, and send one event to user space
//     through a ring buffer: start, end, the function's return value (an
//     OrtStatus*, NULL on success), the session pointer (Run's first
//     argument, or what CreateSession wrote to its OrtSession** out), and
//     for CreateSession the model path, read from the caller's memory;
//   - on entry to ReleaseSession: send the released session pointer, so a
//     session whose address is reused is not mistaken for the old one.
//
// Times come from bpf_ktime_get_ns, the kernel's CLOCK_MONOTONIC. The
// programs use no kernel headers and no CO-RE relocations: the few kernel
// definitions they need are below, so they load on kernels without BTF.

// Kernel ABI definitions (include/uapi/linux/bpf.h and the architectures'
// uapi/asm/ptrace.h), written out instead of included, so that compiling
// needs no kernel headers of the target architecture.
typedef unsigned char __u8;
typedef unsigned int __u32;
typedef unsigned long long __u64;
typedef __u64 __be64;
typedef __u32 __be32;
typedef unsigned short __u16;
typedef __u16 __be16;
typedef __u32 __wsum;
typedef int __s32;
typedef long long __s64;

#if defined(__TARGET_ARCH_x86)
// arch/x86/include/uapi/asm/ptrace.h, x86-64: the names bpf_tracing.h's
// PT_REGS macros use outside the kernel.
struct pt_regs {
	unsigned long r15, r14, r13, r12, rbp, rbx, r11, r10, r9, r8;
	unsigned long rax, rcx, rdx, rsi, rdi, orig_rax, rip, cs, eflags, rsp, ss;
};
#elif defined(__TARGET_ARCH_arm64)
// arch/arm64/include/uapi/asm/ptrace.h: the start of the kernel's
// struct pt_regs, which bpf_tracing.h's PT_REGS macros cast to.
struct user_pt_regs {
	__u64 regs[31];
	__u64 sp;
	__u64 pc;
	__u64 pstate;
};
struct pt_regs;
#else
#error "attach's probes are written for x86-64 and arm64: compile with -D__TARGET_ARCH_x86 or -D__TARGET_ARCH_arm64"
#endif

enum {
	BPF_MAP_TYPE_PERCPU_ARRAY = 6,
	BPF_MAP_TYPE_LRU_HASH = 9,
	BPF_MAP_TYPE_RINGBUF = 27,
};
enum { BPF_ANY = 0 };
enum { BPF_RB_NO_WAKEUP = 1, BPF_RB_FORCE_WAKEUP = 2 };
enum { BPF_RB_AVAIL_DATA = 0 };

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char __license[] SEC("license") = "Dual MIT/GPL";

// Event kinds, the first field of every event (evRun... in Go).
enum event_kind {
	EV_RUN = 1,
	EV_RUN_WITH_BINDING = 2,
	EV_CREATE_SESSION = 3,
	EV_CREATE_SESSION_FROM_ARRAY = 4,
	EV_RELEASE_SESSION = 5,
};

// An event: eight little-endian uint64 fields (parseEvent in Go reads
// them at the offsets evKind... ), then for CreateSession the model path.
struct event {
	__u64 kind;
	__u64 pid_tgid;
	__u64 start;
	__u64 end;
	__u64 arg;     // Run: the session; CreateSession: the path pointer
	__u64 ret;     // the returned OrtStatus*
	__u64 session; // CreateSession: *out; Run: the status code on error
	__u64 spare;
};

#define PATH_MAX 256

struct create_event {
	struct event ev;
	char path[PATH_MAX];
};

// A map entry: the start time and three saved arguments. Start 0 means
// the thread's last call has ended.
struct entry {
	__u64 start;
	__u64 arg0;
	__u64 arg1;
	__u64 arg2;
};

// The entry maps bound the threads they keep an entry for (least recently
// used ones are evicted): far more than call ONNX Runtime at one time.
#define MAP_ENTRIES 16384

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MAP_ENTRIES);
	__type(key, __u64);
	__type(value, struct entry);
} ortel_runs SEC(".maps"), ortel_creates SEC(".maps");

// The ring buffer's size is set by user space before loading (ringSize).
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
} ortel_events SEC(".maps");

// Events dropped because the ring buffer was full.
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} ortel_lost SEC(".maps");

// wakeup_at is how much unread data makes a probe wake the reader, set by
// user space before loading (a quarter of the ring). Below it, probes do
// not wake it at all (a wakeup per Run cost tens of µs of the traced
// process's time): the reader drains the ring every pollInterval instead.
volatile const __u64 wakeup_at = 1 << 20;

// Unused, but they keep the types in the object's BTF, from which bpf2go
// generates the Go types (bpfCreateEvent, bpfEventKind) the layout test
// compares with parseEvent's offsets and kinds.
const struct create_event *const unused_create_event __attribute__((unused));
const enum event_kind *const unused_event_kind __attribute__((unused));

// enter saves the start time and three arguments in the thread's entry of
// map. A thread that called before has an entry already, and it is filled
// in place: no allocation on the Run path (an update, which replaces the
// element, cost more). The clock is read last, so the probe's own work is
// outside the measured interval.
static __always_inline int enter(void *map, __u64 a0, __u64 a1, __u64 a2)
{
	__u64 key = bpf_get_current_pid_tgid();
	struct entry *e = bpf_map_lookup_elem(map, &key);
	if (e) {
		e->arg0 = a0;
		e->arg1 = a1;
		e->arg2 = a2;
		e->start = bpf_ktime_get_ns();
		return 0;
	}
	struct entry v = {.arg0 = a0, .arg1 = a1, .arg2 = a2};
	v.start = bpf_ktime_get_ns();
	bpf_map_update_elem(map, &key, &v, BPF_ANY);
	return 0;
}

// reserve takes room for size bytes in the ring buffer, where the event is
// then written in place and sent by bpf_ringbuf_submit. (Built on the
// stack and copied by bpf_ringbuf_output, a run's event cost ~250 ns more
// in the return probe here whenever the compiler placed it off a 16-byte
// boundary, which C does not control.) A full ring drops the event: it is
// counted, so the loss is reported, and NULL is returned.
static __always_inline void *reserve(__u64 size)
{
	void *ev = bpf_ringbuf_reserve(&ortel_events, size, 0);
	if (ev)
		return ev;
	__u32 zero = 0;
	__u64 *lost = bpf_map_lookup_elem(&ortel_lost, &zero);
	if (lost)
		__sync_fetch_and_add(lost, 1);
	return 0;
}

// wakeup returns bpf_ringbuf_submit's flag: wake the reader only when the
// ring is filling up.
static __always_inline __u64 wakeup(void)
{
	if (bpf_ringbuf_query(&ortel_events, BPF_RB_AVAIL_DATA) >= wakeup_at)
		return BPF_RB_FORCE_WAKEUP;
	return BPF_RB_NO_WAKEUP;
}

// begin_return starts the event of a call's return: it reads the end
// time (first, so the probe's work is outside the interval), finds the
// thread's entry in map, takes size bytes in the ring and writes the
// fields every return sends. It returns NULL when there is nothing to
// send: the thread has no entry, or its start is 0 (the call began before
// the probes were attached), or the ring is full (counted by reserve; the
// entry is then marked done as end_return would).
static __always_inline struct event *begin_return(struct pt_regs *ctx, void *map, __u64 kind, __u64 size, struct entry **ep)
{
	__u64 end = bpf_ktime_get_ns();
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct entry *e = bpf_map_lookup_elem(map, &pid_tgid);
	if (!e || !e->start)
		return 0;
	struct event *ev = reserve(size);
	if (!ev) {
		e->start = 0;
		return 0;
	}
	ev->kind = kind;
	ev->pid_tgid = pid_tgid;
	ev->start = e->start;
	ev->end = end;
	ev->arg = e->arg0;
	ev->ret = PT_REGS_RC(ctx);
	ev->session = 0;
	ev->spare = 0;
	*ep = e;
	return ev;
}

// end_return marks the thread's entry done (start 0; the entry stays for
// its next call, the LRU map evicts those of threads gone) and sends the
// event.
static __always_inline int end_return(struct entry *e, void *ev)
{
	e->start = 0;
	bpf_ringbuf_submit(ev, wakeup());
	return 0;
}

// Run and RunWithBinding: the session is the first argument.
SEC("uprobe")
int ortel_run_enter(struct pt_regs *ctx)
{
	__u64 session = PT_REGS_PARM1(ctx);
	return enter(&ortel_runs, session, session, session);
}

// CreateSession(env, model_path, options, OrtSession **out): the path,
// the out pointer and the environment.
SEC("uprobe")
int ortel_create_enter(struct pt_regs *ctx)
{
	return enter(&ortel_creates, PT_REGS_PARM2(ctx), PT_REGS_PARM4(ctx), PT_REGS_PARM1(ctx));
}

// CreateSessionFromArray(env, model_data, model_data_length, options,
// OrtSession **out): the data pointer, the out pointer and the
// environment.
SEC("uprobe")
int ortel_cfa_enter(struct pt_regs *ctx)
{
	return enter(&ortel_creates, PT_REGS_PARM2(ctx), PT_REGS_PARM5(ctx), PT_REGS_PARM1(ctx));
}

// run_exit ends a Run or RunWithBinding. On error (a non-NULL OrtStatus*)
// it also reads the status's error code, the first int of ORT's OrtStatus.
static __always_inline int run_exit(struct pt_regs *ctx, __u64 kind)
{
	struct entry *e;
	struct event *ev = begin_return(ctx, &ortel_runs, kind, sizeof(*ev), &e);
	if (!ev)
		return 0;
	if (ev->ret) {
		__u32 code = 0;
		bpf_probe_read_user(&code, sizeof(code), (void *)ev->ret);
		ev->session = code;
	}
	return end_return(e, ev);
}

SEC("uretprobe")
int ortel_run_exit(struct pt_regs *ctx)
{
	return run_exit(ctx, EV_RUN);
}

SEC("uretprobe")
int ortel_rwb_exit(struct pt_regs *ctx)
{
	return run_exit(ctx, EV_RUN_WITH_BINDING);
}

// CreateSession's end: the new session is what the function wrote to its
// OrtSession** out argument (the entry's second argument), and the model
// path is read from the caller's memory (it is still valid: the caller
// owns it until the call returns). The path ends at its NUL; the bytes
// after it are whatever the ring held there.
SEC("uretprobe")
int ortel_create_exit(struct pt_regs *ctx)
{
	struct entry *e;
	struct create_event *ce = (struct create_event *)begin_return(ctx, &ortel_creates, EV_CREATE_SESSION, sizeof(*ce), &e);
	if (!ce)
		return 0;
	bpf_probe_read_user(&ce->ev.session, sizeof(ce->ev.session), (void *)e->arg1);
	bpf_probe_read_user_str(ce->path, sizeof(ce->path), (void *)e->arg0);
	return end_return(e, ce);
}

// CreateSessionFromArray's end: as CreateSession's, with no path.
SEC("uretprobe")
int ortel_cfa_exit(struct pt_regs *ctx)
{
	struct entry *e;
	struct event *ev = begin_return(ctx, &ortel_creates, EV_CREATE_SESSION_FROM_ARRAY, sizeof(*ev), &e);
	if (!ev)
		return 0;
	bpf_probe_read_user(&ev->session, sizeof(ev->session), (void *)e->arg1);
	return end_return(e, ev);
}

// ReleaseSession(session): the released session.
SEC("uprobe")
int ortel_release(struct pt_regs *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct event *ev = reserve(sizeof(*ev));
	if (!ev)
		return 0;
	ev->kind = EV_RELEASE_SESSION;
	ev->pid_tgid = pid_tgid;
	ev->start = now;
	ev->end = now;
	ev->arg = PT_REGS_PARM1(ctx);
	ev->ret = 0;
	ev->session = 0;
	ev->spare = 0;
	bpf_ringbuf_submit(ev, wakeup());
	return 0;
}
