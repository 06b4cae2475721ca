//go:build linux && (amd64 || arm64)

package attach

import (
	"slices"
	"testing"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// The event and map entry the C programs write are the ones parseEvent and
// inFlight read: bpf2go's Go types of the C structs (from the object's
// BTF) sit at the offsets the Go side decodes, and the kinds agree.
func TestProbeEventLayout(t *testing.T) {
	var ev bpfEvent
	var ce bpfCreateEvent
	var en bpfEntry
	for _, tc := range []struct {
		name      string
		got, want uintptr
	}{
		{"event.kind", unsafe.Offsetof(ev.Kind), evKind},
		{"event.pid_tgid", unsafe.Offsetof(ev.PidTgid), evPidTgid},
		{"event.start", unsafe.Offsetof(ev.Start), evStart},
		{"event.end", unsafe.Offsetof(ev.End), evEnd},
		{"event.arg", unsafe.Offsetof(ev.Arg), evArg},
		{"event.ret", unsafe.Offsetof(ev.Ret), evRet},
		{"event.session", unsafe.Offsetof(ev.Session), evSession},
		{"event.spare", unsafe.Offsetof(ev.Spare), evSpare},
		{"sizeof(event)", unsafe.Sizeof(ev), evHeader},
		{"create_event.path", unsafe.Offsetof(ce.Path), evHeader},
		{"sizeof(create_event.path)", unsafe.Sizeof(ce.Path), pathMax},
		{"sizeof(create_event)", unsafe.Sizeof(ce), evCreate},
		{"entry.start", unsafe.Offsetof(en.Start), valStart},
		{"entry.arg0", unsafe.Offsetof(en.Arg0), valArg0},
		{"entry.arg1", unsafe.Offsetof(en.Arg1), valArg1},
		{"entry.arg2", unsafe.Offsetof(en.Arg2), valArg2},
		{"sizeof(entry)", unsafe.Sizeof(en), valSize},
		{"EV_RUN", uintptr(bpfEventKindEV_RUN), uintptr(evRun)},
		{"EV_RUN_WITH_BINDING", uintptr(bpfEventKindEV_RUN_WITH_BINDING), uintptr(evRunWithBinding)},
		{"EV_CREATE_SESSION", uintptr(bpfEventKindEV_CREATE_SESSION), uintptr(evCreateSession)},
		{"EV_CREATE_SESSION_FROM_ARRAY", uintptr(bpfEventKindEV_CREATE_SESSION_FROM_ARRAY), uintptr(evCreateSessionFromArray)},
		{"EV_RELEASE_SESSION", uintptr(bpfEventKindEV_RELEASE_SESSION), uintptr(evReleaseSession)},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %d in the C programs, %d in the Go decoder", tc.name, tc.got, tc.want)
		}
	}
}

// Each architecture's object reads the arguments and the return value
// from that architecture's registers in struct pt_regs: x86-64's rdi,
// rsi, rcx, r8 and rax (System V), arm64's x0..x4 (x0 also holds the
// return value). The arm64 object cannot run here, so this is what checks
// it reads ORT's arguments where arm64 passes them; the attach tests check
// the x86-64 one end to end.
func TestProbeObjectsReadTheirArchitecturesRegisters(t *testing.T) {
	// struct pt_regs offsets.
	const (
		r8, rax, rcx, rsi, rdi = 72, 80, 88, 104, 112
		x0, x1, x3, x4         = 0, 8, 24, 32
	)
	want := map[string]map[string][]int16{
		"bpf_x86_bpfel.o": {
			"ortel_run_enter":    {rdi},           // Run(session, ...)
			"ortel_create_enter": {rcx, rsi, rdi}, // CreateSession(env, path, options, out)
			"ortel_cfa_enter":    {r8, rsi, rdi},  // CreateSessionFromArray(env, data, length, options, out)
			"ortel_release":      {rdi},           // ReleaseSession(session)
			"ortel_run_exit":     {rax},
			"ortel_rwb_exit":     {rax},
			"ortel_create_exit":  {rax},
			"ortel_cfa_exit":     {rax},
		},
		"bpf_arm64_bpfel.o": {
			"ortel_run_enter":    {x0},
			"ortel_create_enter": {x0, x1, x3},
			"ortel_cfa_enter":    {x0, x1, x4},
			"ortel_release":      {x0},
			"ortel_run_exit":     {x0},
			"ortel_rwb_exit":     {x0},
			"ortel_create_exit":  {x0},
			"ortel_cfa_exit":     {x0},
		},
	}
	for object, progs := range want {
		t.Run(object, func(t *testing.T) {
			spec, err := ebpf.LoadCollectionSpec(object)
			if err != nil {
				t.Fatal(err)
			}
			if len(spec.Programs) != len(progs) {
				t.Errorf("%d programs, want %d", len(spec.Programs), len(progs))
			}
			for name, offs := range progs {
				p, ok := spec.Programs[name]
				if !ok {
					t.Errorf("no program %s", name)
					continue
				}
				if got := contextReads(p.Instructions); !slices.Equal(got, offs) {
					t.Errorf("%s reads pt_regs at %v, want %v", name, got, offs)
				}
			}
		})
	}
}

// contextReads returns the offsets, sorted and without repeats, at which
// insns load from the program's context: R1 at entry, the registers it is
// copied to, and the stack slots it is spilled to and reloaded from.
func contextReads(insns asm.Instructions) []int16 {
	ctx := map[asm.Register]bool{asm.R1: true}
	spilled := map[int16]bool{}
	var offs []int16
	for _, ins := range insns {
		op := ins.OpCode
		switch {
		case ins.IsFunctionCall() || ins.IsBuiltinCall():
			for r := asm.R1; r <= asm.R5; r++ {
				delete(ctx, r)
			}
		case op.Class() == asm.StXClass && ins.Dst == asm.RFP:
			spilled[ins.Offset] = ctx[ins.Src]
		case op.Class() == asm.StClass && ins.Dst == asm.RFP:
			delete(spilled, ins.Offset)
		case op.Class() == asm.LdXClass && op.Mode() == asm.MemMode:
			switch {
			case ins.Src == asm.RFP && spilled[ins.Offset]:
				ctx[ins.Dst] = true
				continue
			case ctx[ins.Src]:
				offs = append(offs, ins.Offset)
			}
			delete(ctx, ins.Dst)
		case op.Class().IsALU() && op.ALUOp() == asm.Mov && op.Source() == asm.RegSource && ctx[ins.Src]:
			ctx[ins.Dst] = true
		case op.Class().IsALU() || op.Class() == asm.LdClass:
			delete(ctx, ins.Dst)
		}
	}
	slices.Sort(offs)
	return slices.Compact(offs)
}

// Both objects pass this kernel's verifier, the arm64 one included: the
// offsets it reads lie inside x86-64's struct pt_regs too, so this kernel
// checks its programs as an arm64 kernel would (it cannot run them).
func TestProbeObjectsLoad(t *testing.T) {
	requireEBPF(t)
	for _, object := range []string{"bpf_x86_bpfel.o", "bpf_arm64_bpfel.o"} {
		t.Run(object, func(t *testing.T) {
			spec, err := ebpf.LoadCollectionSpec(object)
			if err != nil {
				t.Fatal(err)
			}
			coll, err := ebpf.NewCollection(spec)
			if err != nil {
				t.Fatalf("%+v", err)
			}
			coll.Close()
		})
	}
}
