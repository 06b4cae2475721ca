//go:build linux

package attach

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
)

// The probe programs are written with cilium's asm package, so building
// ortel needs no C compiler for eBPF. What they do:
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
// Times come from bpf_ktime_get_ns, the kernel's CLOCK_MONOTONIC.

// Offsets into struct pt_regs on x86-64 (arch/x86/include/asm/ptrace.h).
const (
	regRAX = 80
	regRCX = 88
	regRDX = 96
	regRSI = 104
	regRDI = 112
	regR8  = 72
)

// Event kinds, the first field of every event.
const (
	evRun uint64 = iota + 1
	evRunWithBinding
	evCreateSession
	evCreateSessionFromArray
	evReleaseSession
)

// Event layout: eight little-endian uint64 fields, then for CreateSession
// the model path.
const (
	evKind    = 0
	evPidTgid = 8
	evStart   = 16
	evEnd     = 24
	evArg     = 32 // Run: the session; CreateSession: the path pointer
	evRet     = 40 // the returned OrtStatus*
	evSession = 48 // CreateSession: *out; Run: the status code on error
	evSpare   = 56
	evHeader  = 64
	pathMax   = 256
	evCreate  = evHeader + pathMax
)

// Entry map value: start time and three saved arguments.
const (
	valStart = 0
	valArg0  = 8
	valArg1  = 16
	valArg2  = 24
	valSize  = 32
)

// mapEntries bounds the threads a map keeps an entry for (least recently
// used ones are evicted): far more than call ONNX Runtime at one time.
const mapEntries = 16384

// ringSize is the ring buffer's size: 4 MiB holds 58000 run events (72
// bytes with the ring's header), far more than user space lags behind. A
// variable so that a test can make it overflow.
var ringSize = 4 << 20

// programSpecs returns the maps and programs of the probes.
func collectionSpec() *ebpf.CollectionSpec {
	hash := func(name string) *ebpf.MapSpec {
		return &ebpf.MapSpec{Name: name, Type: ebpf.LRUHash, KeySize: 8, ValueSize: valSize, MaxEntries: mapEntries}
	}
	prog := func(name string, insns asm.Instructions) *ebpf.ProgramSpec {
		return &ebpf.ProgramSpec{Name: name, Type: ebpf.Kprobe, License: "Dual MIT/GPL", Instructions: insns}
	}
	return &ebpf.CollectionSpec{
		Maps: map[string]*ebpf.MapSpec{
			"ortel_runs":    hash("ortel_runs"),
			"ortel_creates": hash("ortel_creates"),
			"ortel_events":  {Name: "ortel_events", Type: ebpf.RingBuf, MaxEntries: uint32(ringSize)},
			"ortel_lost":    {Name: "ortel_lost", Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: 8, MaxEntries: 1},
		},
		Programs: map[string]*ebpf.ProgramSpec{
			"ortel_run_enter":    prog("ortel_run_enter", entryProgram("ortel_runs", regRDI, regRDI, regRDI)),
			"ortel_run_exit":     prog("ortel_run_exit", runExitProgram(evRun)),
			"ortel_rwb_exit":     prog("ortel_rwb_exit", runExitProgram(evRunWithBinding)),
			"ortel_create_enter": prog("ortel_create_enter", entryProgram("ortel_creates", regRSI, regRCX, regRDI)),
			"ortel_cfa_enter":    prog("ortel_cfa_enter", entryProgram("ortel_creates", regRSI, regR8, regRDI)),
			"ortel_create_exit":  prog("ortel_create_exit", createExitProgram(evCreateSession)),
			"ortel_cfa_exit":     prog("ortel_cfa_exit", createExitProgram(evCreateSessionFromArray)),
			"ortel_release":      prog("ortel_release", releaseProgram()),
		},
	}
}

// entryProgram saves the start time and three arguments (pt_regs offsets)
// in the thread's entry of the named map. A thread that called before
// has an entry already, and it is filled in place: no allocation on the
// Run path (an update, which replaces the element, cost more).
func entryProgram(m string, a0, a1, a2 int16) asm.Instructions {
	const key = -8
	const val = key - valSize
	return asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.FnGetCurrentPidTgid.Call(),
		asm.StoreMem(asm.RFP, key, asm.R0, asm.DWord),
		asm.LoadMapPtr(asm.R1, 0).WithReference(m),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, key),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "insert"),
		asm.Mov.Reg(asm.R7, asm.R0),
		asm.LoadMem(asm.R1, asm.R6, a0, asm.DWord),
		asm.StoreMem(asm.R7, valArg0, asm.R1, asm.DWord),
		asm.LoadMem(asm.R1, asm.R6, a1, asm.DWord),
		asm.StoreMem(asm.R7, valArg1, asm.R1, asm.DWord),
		asm.LoadMem(asm.R1, asm.R6, a2, asm.DWord),
		asm.StoreMem(asm.R7, valArg2, asm.R1, asm.DWord),
		// The clock is read last, so the probe's own work is outside the
		// measured interval.
		asm.FnKtimeGetNs.Call(),
		asm.StoreMem(asm.R7, valStart, asm.R0, asm.DWord),
		asm.Mov.Imm(asm.R0, 0),
		asm.Return(),

		asm.LoadMem(asm.R1, asm.R6, a0, asm.DWord).WithSymbol("insert"),
		asm.StoreMem(asm.RFP, val+valArg0, asm.R1, asm.DWord),
		asm.LoadMem(asm.R1, asm.R6, a1, asm.DWord),
		asm.StoreMem(asm.RFP, val+valArg1, asm.R1, asm.DWord),
		asm.LoadMem(asm.R1, asm.R6, a2, asm.DWord),
		asm.StoreMem(asm.RFP, val+valArg2, asm.R1, asm.DWord),
		asm.FnKtimeGetNs.Call(),
		asm.StoreMem(asm.RFP, val+valStart, asm.R0, asm.DWord),
		asm.LoadMapPtr(asm.R1, 0).WithReference(m),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, key),
		asm.Mov.Reg(asm.R3, asm.RFP),
		asm.Add.Imm(asm.R3, val),
		asm.Mov.Imm(asm.R4, 0), // BPF_ANY
		asm.FnMapUpdateElem.Call(),
		asm.Mov.Imm(asm.R0, 0),
		asm.Return(),
	}
}

// exitPrologue reads the end time (first, so the probe's work is outside
// the interval), finds the thread's entry in map m and copies it into the
// event at fp-size. It jumps to "out" when there is no entry (the call
// began before the probes were attached). After it: R6 = ctx, R9 = the
// map value, fp-size-8 = the key.
func exitPrologue(m string, kind uint64, size int16) asm.Instructions {
	ev := -size
	return asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.FnKtimeGetNs.Call(),
		asm.StoreMem(asm.RFP, ev+evEnd, asm.R0, asm.DWord),
		asm.FnGetCurrentPidTgid.Call(),
		asm.StoreMem(asm.RFP, ev-8, asm.R0, asm.DWord),
		asm.StoreMem(asm.RFP, ev+evPidTgid, asm.R0, asm.DWord),
		asm.LoadMapPtr(asm.R1, 0).WithReference(m),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, int32(ev-8)),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "out"),
		asm.Mov.Reg(asm.R9, asm.R0),
		// A start of 0: the thread's last call ended, and this one began
		// before the probes were attached.
		asm.LoadMem(asm.R1, asm.R9, valStart, asm.DWord),
		asm.JEq.Imm(asm.R1, 0, "out"),
		asm.StoreMem(asm.RFP, ev+evStart, asm.R1, asm.DWord),
		asm.Mov.Imm(asm.R1, int32(int64(kind))),
		asm.StoreMem(asm.RFP, ev+evKind, asm.R1, asm.DWord),
		asm.LoadMem(asm.R1, asm.R9, valArg0, asm.DWord),
		asm.StoreMem(asm.RFP, ev+evArg, asm.R1, asm.DWord),
		asm.LoadMem(asm.R7, asm.R6, regRAX, asm.DWord),
		asm.StoreMem(asm.RFP, ev+evRet, asm.R7, asm.DWord),
		asm.Mov.Imm(asm.R1, int32(0)),
		asm.StoreMem(asm.RFP, ev+evSession, asm.R1, asm.DWord),
		asm.Mov.Imm(asm.R1, int32(0)),
		asm.StoreMem(asm.RFP, ev+evSpare, asm.R1, asm.DWord),
	}
}

// Ring buffer flags (linux/bpf.h).
const (
	bpfRBNoWakeup    = 1
	bpfRBForceWakeup = 2
	bpfRBAvailData   = 0
)

// wakeupAt is how much unread data makes a probe wake the reader. Below
// it, probes do not wake it at all (a wakeup per Run cost tens of µs of
// the traced process's time): the reader drains the ring every
// pollInterval instead.
func wakeupAt() int32 { return int32(ringSize / 4) }

// output sends size bytes at fp+off to the ring buffer, waking the reader
// only when the ring is filling up.
func output(off int16, size int32) asm.Instructions {
	return asm.Instructions{
		asm.LoadMapPtr(asm.R1, 0).WithReference("ortel_events"),
		asm.Mov.Imm(asm.R2, bpfRBAvailData),
		asm.FnRingbufQuery.Call(),
		asm.Mov.Imm(asm.R8, bpfRBNoWakeup),
		asm.JLT.Imm(asm.R0, wakeupAt(), "quiet"),
		asm.Mov.Imm(asm.R8, bpfRBForceWakeup),
		asm.LoadMapPtr(asm.R1, 0).WithReference("ortel_events").WithSymbol("quiet"),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, int32(off)),
		asm.Mov.Imm(asm.R3, size),
		asm.Mov.Reg(asm.R4, asm.R8),
		asm.FnRingbufOutput.Call(),
		// A full ring drops the event: count it, so the loss is reported.
		asm.JEq.Imm(asm.R0, 0, "sent"),
		asm.Mov.Imm(asm.R1, 0),
		asm.StoreMem(asm.RFP, off-16, asm.R1, asm.Word),
		asm.LoadMapPtr(asm.R1, 0).WithReference("ortel_lost"),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, int32(off-16)),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "sent"),
		asm.Mov.Imm(asm.R1, 1),
		asm.StoreXAdd(asm.R0, asm.R1, asm.DWord),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("sent"),
	}
}

// exitEpilogue marks the thread's entry done (start 0; the entry stays
// for its next call, the LRU map evicts those of threads gone) and sends
// the event.
func exitEpilogue(size int16) asm.Instructions {
	ev := -size
	insns := asm.Instructions{
		asm.Mov.Imm(asm.R1, 0),
		asm.StoreMem(asm.R9, valStart, asm.R1, asm.DWord),
	}
	insns = append(insns, output(ev, int32(size))...)
	return append(insns,
		asm.Mov.Imm(asm.R0, 0).WithSymbol("out"),
		asm.Return(),
	)
}

// runExitProgram ends a Run or RunWithBinding. On error (a non-NULL
// OrtStatus*) it also reads the status's error code, the first int of
// ORT's OrtStatus.
func runExitProgram(kind uint64) asm.Instructions {
	const size = evHeader
	insns := exitPrologue("ortel_runs", kind, size)
	insns = append(insns,
		asm.JEq.Imm(asm.R7, 0, "send"),
		asm.Mov.Reg(asm.R1, asm.RFP),
		asm.Add.Imm(asm.R1, -size+evSession),
		asm.Mov.Imm(asm.R2, 4),
		asm.Mov.Reg(asm.R3, asm.R7),
		asm.FnProbeReadUser.Call(),
	)
	ep := exitEpilogue(size)
	ep[0] = ep[0].WithSymbol("send")
	return append(insns, ep...)
}

// createExitProgram ends CreateSession or CreateSessionFromArray: the new
// session is what the function wrote to its OrtSession** out argument,
// and CreateSession's model path is read from the caller's memory (it is
// still valid: the caller owns it until the call returns).
func createExitProgram(kind uint64) asm.Instructions {
	size := int16(evHeader)
	if kind == evCreateSession {
		size = evCreate
	}
	insns := exitPrologue("ortel_creates", kind, size)
	insns = append(insns,
		// *out, saved as the entry's second argument.
		asm.Mov.Reg(asm.R1, asm.RFP),
		asm.Add.Imm(asm.R1, int32(-size+evSession)),
		asm.Mov.Imm(asm.R2, 8),
		asm.LoadMem(asm.R3, asm.R9, valArg1, asm.DWord),
		asm.FnProbeReadUser.Call(),
	)
	if kind == evCreateSession {
		insns = append(insns,
			asm.LoadMem(asm.R3, asm.R9, valArg0, asm.DWord),
			asm.Mov.Reg(asm.R1, asm.RFP),
			asm.Add.Imm(asm.R1, int32(-size+evHeader)),
			asm.Mov.Imm(asm.R2, pathMax),
			asm.FnProbeReadUserStr.Call(),
		)
	}
	return append(insns, exitEpilogue(size)...)
}

// releaseProgram reports a released session.
func releaseProgram() asm.Instructions {
	const ev = -evHeader
	insns := asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.FnKtimeGetNs.Call(),
		asm.StoreMem(asm.RFP, ev+evStart, asm.R0, asm.DWord),
		asm.StoreMem(asm.RFP, ev+evEnd, asm.R0, asm.DWord),
		asm.FnGetCurrentPidTgid.Call(),
		asm.StoreMem(asm.RFP, ev+evPidTgid, asm.R0, asm.DWord),
		asm.Mov.Imm(asm.R1, int32(int64(evReleaseSession))),
		asm.StoreMem(asm.RFP, ev+evKind, asm.R1, asm.DWord),
		asm.LoadMem(asm.R1, asm.R6, regRDI, asm.DWord),
		asm.StoreMem(asm.RFP, ev+evArg, asm.R1, asm.DWord),
		asm.Mov.Imm(asm.R1, int32(0)),
		asm.StoreMem(asm.RFP, ev+evRet, asm.R1, asm.DWord),
		asm.Mov.Imm(asm.R1, int32(0)),
		asm.StoreMem(asm.RFP, ev+evSession, asm.R1, asm.DWord),
		asm.Mov.Imm(asm.R1, int32(0)),
		asm.StoreMem(asm.RFP, ev+evSpare, asm.R1, asm.DWord),
	}
	insns = append(insns, output(ev, evHeader)...)
	return append(insns, asm.Mov.Imm(asm.R0, 0), asm.Return())
}

// probes is the loaded collection and the links attached from it.
type probes struct {
	coll  *ebpf.Collection
	links []link.Link
}

// loadProbes loads the maps and programs into the kernel.
func loadProbes() (*probes, error) {
	coll, err := ebpf.NewCollection(collectionSpec())
	if err != nil {
		var ve *ebpf.VerifierError
		if errors.As(err, &ve) {
			return nil, fmt.Errorf("load the eBPF probes: %+v", ve)
		}
		return nil, fmt.Errorf("load the eBPF probes: %w", err)
	}
	return &probes{coll: coll}, nil
}

// attach puts entry and return probes on the functions of one library
// file (o), for one process (pid) or all (pid 0).
func (p *probes) attach(o *Offsets, pid int) error {
	ex, err := link.OpenExecutable(o.Path)
	if err != nil {
		return fmt.Errorf("open %q for uprobes: %w", o.Path, err)
	}
	type probe struct {
		fn   Function
		prog string
		ret  bool
	}
	for _, pr := range []probe{
		{FuncRun, "ortel_run_enter", false}, {FuncRun, "ortel_run_exit", true},
		{FuncRunWithBinding, "ortel_run_enter", false}, {FuncRunWithBinding, "ortel_rwb_exit", true},
		{FuncCreateSession, "ortel_create_enter", false}, {FuncCreateSession, "ortel_create_exit", true},
		{FuncCreateSessionFromArray, "ortel_cfa_enter", false}, {FuncCreateSessionFromArray, "ortel_cfa_exit", true},
		{FuncReleaseSession, "ortel_release", false},
	} {
		prog := p.coll.Programs[pr.prog]
		var l link.Link
		// Perf-event uprobes, not uprobe_multi links: they cost the same
		// per call here, and closing one detaches and releases its
		// program at once (a multi link's program is freed after an RCU
		// grace period), so a check right after Close sees nothing left.
		switch {
		case pr.ret:
			l, err = ex.Uretprobe("", prog, &link.UprobeOptions{Address: o.File[pr.fn], PID: pid, TraceFSPrefix: "ortel"})
		default:
			l, err = ex.Uprobe("", prog, &link.UprobeOptions{Address: o.File[pr.fn], PID: pid, TraceFSPrefix: "ortel"})
		}
		if err != nil {
			return fmt.Errorf("attach a uprobe to %s in %q (offset %#x): %w", pr.fn, o.Path, o.File[pr.fn], err)
		}
		p.links = append(p.links, l)
	}
	return nil
}

// lost sums the events dropped because the ring buffer was full.
func (p *probes) lost() int64 {
	var perCPU []uint64
	if err := p.coll.Maps["ortel_lost"].Lookup(uint32(0), &perCPU); err != nil {
		return 0
	}
	var n uint64
	for _, v := range perCPU {
		n += v
	}
	return int64(n)
}

// close detaches every probe and unloads the programs and maps.
func (p *probes) close() error {
	var errs []error
	for _, l := range p.links {
		errs = append(errs, l.Close())
	}
	p.links = nil
	p.coll.Close()
	return errors.Join(errs...)
}
