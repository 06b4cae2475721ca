//go:build linux

package attach

// TEMPORARY: the hand-written asm probes this change replaces, kept only
// to measure them beside the C ones in one invocation
// (BenchmarkProbeCostAsmVsC); deleted by the next commit, with the
// probeSpec variable it swaps.

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"
)

// Offsets into struct pt_regs on x86-64 (arch/x86/include/asm/ptrace.h).
const (
	regRAX = 80
	regRCX = 88
	regRDX = 96
	regRSI = 104
	regRDI = 112
	regR8  = 72
)

// mapEntries bounds the threads a map keeps an entry for (least recently
// used ones are evicted): far more than call ONNX Runtime at one time.
const mapEntries = 16384

// programSpecs returns the maps and programs of the probes.
func asmCollectionSpec() (*ebpf.CollectionSpec, error) {
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
	}, nil
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
func asmWakeupAt() int32 { return int32(ringSize / 4) }

// output sends size bytes at fp+off to the ring buffer, waking the reader
// only when the ring is filling up.
func output(off int16, size int32) asm.Instructions {
	return asm.Instructions{
		asm.LoadMapPtr(asm.R1, 0).WithReference("ortel_events"),
		asm.Mov.Imm(asm.R2, bpfRBAvailData),
		asm.FnRingbufQuery.Call(),
		asm.Mov.Imm(asm.R8, bpfRBNoWakeup),
		asm.JLT.Imm(asm.R0, asmWakeupAt(), "quiet"),
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

// BenchmarkProbeCostAsmVsC measures the probe cost per Run of the C
// programs and of the asm ones they replace, beside the detached client
// and the empty-program floor, as BenchmarkProbeCostNode does: four arms
// in rotating order, each block 2000 runs timed by the client.
func BenchmarkProbeCostAsmVsC(b *testing.B) { asmVsC(b, 10, 5) }

// BenchmarkProbeProgramsAsmVsC is the in-program part alone, with more
// pairs of rounds.
func BenchmarkProbeProgramsAsmVsC(b *testing.B) { asmVsC(b, 0, 20) }

func asmVsC(b *testing.B, rounds, pairs int) {
	requireEBPF(b)
	for _, version := range []string{"1.24.3", "1.30.0"} {
		b.Run(version, func(b *testing.B) {
			model := testModel(b)
			c := startNode(b, version)
			c.do("create " + model)
			c.do("run 500") // warm up
			const runs = 2000
			block := func() float64 {
				got := c.do(fmt.Sprintf("run %d", runs))
				f := strings.Fields(got)
				v, err := strconv.ParseFloat(f[len(f)-1], 64)
				if err != nil {
					b.Fatalf("client: %q", got)
				}
				return v
			}
			attachedWith := func(spec func() (*ebpf.CollectionSpec, error)) func() float64 {
				return func() float64 {
					defer func(f func() (*ebpf.CollectionSpec, error)) { probeSpec = f }(probeSpec)
					probeSpec = spec
					s := newSinks()
					tr, err := Start(append(s.opts, WithPIDs(c.pid()))...)
					if err != nil {
						b.Fatal(err)
					}
					stop := runTracer(b, tr)
					v := block()
					stop()
					tr.Close()
					if n := len(s.runSpans()); n != runs {
						b.Fatalf("%d run spans for %d runs", n, runs)
					}
					return v
				}
			}
			tg, err := FindTarget(c.pid())
			if err != nil {
				b.Fatal(err)
			}
			o, err := Resolve(tg.Libraries[0].Open)
			if err != nil {
				b.Fatal(err)
			}
			emptyFloor := func() float64 {
				undo := attachEmpty(b, o, c.pid())
				defer undo()
				return block()
			}
			names := []string{"detached", "empty", "C", "asm"}
			arms := []func() float64{block, emptyFloor, attachedWith(collectionSpec), attachedWith(asmCollectionSpec)}
			res := make([][]float64, len(arms))
			var dFloor, dC, dAsm, cMinusAsm []float64
			for i := 0; i < rounds; i++ {
				r := make([]float64, len(arms))
				for j := range arms {
					k := (i + j) % len(arms)
					r[k] = arms[k]()
				}
				for k := range arms {
					res[k] = append(res[k], r[k])
				}
				dFloor, dC, dAsm = append(dFloor, r[1]-r[0]), append(dC, r[2]-r[0]), append(dAsm, r[3]-r[0])
				cMinusAsm = append(cMinusAsm, r[2]-r[3])
			}
			// In-program time, from the kernel's run-time statistics: what
			// Run's entry and return programs themselves cost per call,
			// without the trap, which the end-to-end figures cannot resolve.
			stats, err := ebpf.EnableStats(uint32(unix.BPF_STATS_RUN_TIME))
			if err != nil {
				b.Fatal(err)
			}
			// Both sets attached at once, on the same calls: each Run runs
			// the C and the asm programs one after the other, under the same
			// load; which is attached first alternates by round.
			start := func(spec func() (*ebpf.CollectionSpec, error)) (*Tracer, func()) {
				defer func(f func() (*ebpf.CollectionSpec, error)) { probeSpec = f }(probeSpec)
				probeSpec = spec
				s := newSinks()
				tr, err := Start(append(s.opts, WithPIDs(c.pid()))...)
				if err != nil {
					b.Fatal(err)
				}
				stop := runTracer(b, tr)
				return tr, func() { stop() }
			}
			progTime := func(tr *Tracer, name string) float64 {
				st, err := tr.probes.coll.Programs[name].Stats()
				if err != nil || st.RunCount < runs {
					b.Fatalf("stats of %s: %+v, %v", name, st, err)
				}
				return float64(st.Runtime.Nanoseconds()) / float64(st.RunCount)
			}
			// The set attached second runs first on each call and pays more
			// (it meets the caches the Run left); so each pair of rounds
			// has each set once in each place, and a pair's figure for a
			// set is its mean over the two places.
			var nsC, nsAsm, nsDiff, enC, enAsm, exC, exAsm []float64
			for i := 0; i < pairs; i++ {
				var sumC, sumAsm, sumEnC, sumEnAsm, sumExC, sumExAsm float64
				for _, cFirst := range []bool{true, false} {
					var trC, trAsm *Tracer
					var stopC, stopAsm func()
					if cFirst {
						trC, stopC = start(collectionSpec)
						trAsm, stopAsm = start(asmCollectionSpec)
					} else {
						trAsm, stopAsm = start(asmCollectionSpec)
						trC, stopC = start(collectionSpec)
					}
					block()
					stopC()
					stopAsm()
					a, bb := progTime(trC, "ortel_run_enter"), progTime(trC, "ortel_run_exit")
					x, y := progTime(trAsm, "ortel_run_enter"), progTime(trAsm, "ortel_run_exit")
					sumEnC, sumExC, sumEnAsm, sumExAsm = sumEnC+a, sumExC+bb, sumEnAsm+x, sumExAsm+y
					sumC += a + bb
					sumAsm += x + y
					trC.Close()
					trAsm.Close()
				}
				nsC, nsAsm, nsDiff = append(nsC, sumC/2), append(nsAsm, sumAsm/2), append(nsDiff, (sumC-sumAsm)/2)
				enC, enAsm, exC, exAsm = append(enC, sumEnC/2), append(enAsm, sumEnAsm/2), append(exC, sumExC/2), append(exAsm, sumExAsm/2)
			}
			stats.Close()
			b.ReportMetric(median(nsC), "ns-C-programs/run")
			b.ReportMetric(median(nsAsm), "ns-asm-programs/run")
			b.ReportMetric(median(nsDiff), "ns-C-minus-asm-programs/run")
			b.Logf("ORT %s, in-program time of Run's entry+return programs (kernel run-time stats, both attached on the same runs, %d pairs of rounds of %d runs), ns per run, by pair: C %.0f, asm %.0f; medians C %.0f (entry %.0f, return %.0f), asm %.0f (entry %.0f, return %.0f), C minus asm %.0f (load: %s)",
				version, pairs, runs, nsC, nsAsm, median(nsC), median(enC), median(exC), median(nsAsm), median(enAsm), median(exAsm), median(nsDiff), loadavg())
			if rounds == 0 {
				return
			}
			b.ReportMetric(median(dC), "µs-C-cost/run")
			b.ReportMetric(median(dAsm), "µs-asm-cost/run")
			b.ReportMetric(median(dFloor), "µs-kernel-floor/run")
			b.ReportMetric(median(cMinusAsm), "µs-C-minus-asm/run")
			for k, n := range names {
				b.Logf("%s medians per block: %v µs", n, res[k])
			}
			b.Logf("ORT %s, %d rounds of %d runs: probe cost per run C %.2f µs, asm %.2f µs, empty-program floor %.2f µs; C minus asm, median of per-round differences %.2f µs (load: %s)",
				version, rounds, runs, median(dC), median(dAsm), median(dFloor), median(cMinusAsm), loadavg())
		})
	}
}
