//go:build linux

package attach

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
)

// The probe programs are C (bpf/probes.bpf.c, which says what they do),
// compiled by bpf2go for each architecture whose struct pt_regs they read:
// bpf_x86_bpfel.o (amd64) and bpf_arm64_bpfel.o (arm64), embedded by the
// generated bpf_*_bpfel.go files. Both are committed, so building ortel
// needs no C compiler; `make ebpf` regenerates them with clang 14, and CI's
// `make ebpf-check` fails when they are not what the source compiles to.
//
//go:generate go run github.com/cilium/ebpf/cmd/bpf2go -tags linux -target amd64,arm64 -type event -type create_event -type event_kind bpf bpf/probes.bpf.c -- -I bpf/headers -Wall -Werror

// Event kinds, the first field of every event (enum event_kind in C).
const (
	evRun uint64 = iota + 1
	evRunWithBinding
	evCreateSession
	evCreateSessionFromArray
	evReleaseSession
)

// Event layout (struct event and struct create_event in C): eight
// little-endian uint64 fields, then for CreateSession the model path.
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

// Entry map value (struct entry in C): start time and three saved
// arguments.
const (
	valStart = 0
	valArg0  = 8
	valArg1  = 16
	valArg2  = 24
	valSize  = 32
)

// ringSize is the ring buffer's size: 4 MiB holds 58000 run events (72
// bytes with the ring's header), far more than user space lags behind. A
// variable so that a test can make it overflow.
var ringSize = 4 << 20

// wakeupAt is how much unread data makes a probe wake the reader (the
// programs' wakeup_at). Below it, probes do not wake it at all (a wakeup
// per Run cost tens of µs of the traced process's time): the reader
// drains the ring every pollInterval instead.
func wakeupAt() uint64 { return uint64(ringSize / 4) }

// collectionSpec returns the maps and programs of the probes, compiled
// for this architecture, with the ring buffer's size set.
func collectionSpec() (*ebpf.CollectionSpec, error) {
	if runtime.GOARCH == "386" {
		// bpf2go builds the x86 object for 386 too, but it reads x86-64's
		// registers.
		return nil, errors.New("attach's eBPF probes are compiled for amd64 and arm64, not 386")
	}
	spec, err := loadBpf()
	if err != nil {
		return nil, fmt.Errorf("read the eBPF probes: %w", err)
	}
	ring, ok := spec.Maps["ortel_events"]
	wake, ok2 := spec.Variables["wakeup_at"]
	if !ok || !ok2 {
		return nil, errors.New("read the eBPF probes: no ortel_events ring buffer or wakeup_at variable in the object")
	}
	ring.MaxEntries = uint32(ringSize)
	if err := wake.Set(wakeupAt()); err != nil {
		return nil, fmt.Errorf("set the eBPF probes' wakeup_at: %w", err)
	}
	return spec, nil
}

// probes is the loaded collection and the links attached from it, by the
// process they filter on (0: every process mapping the library).
type probes struct {
	coll  *ebpf.Collection
	links map[int][]link.Link
}

// loadProbes loads the maps and programs into the kernel.
func loadProbes() (*probes, error) {
	spec, err := collectionSpec()
	if err != nil {
		return nil, err
	}
	coll, err := ebpf.NewCollection(spec)
	if err != nil {
		var ve *ebpf.VerifierError
		if errors.As(err, &ve) {
			return nil, fmt.Errorf("load the eBPF probes: %+v", ve)
		}
		return nil, fmt.Errorf("load the eBPF probes: %w", err)
	}
	return &probes{coll: coll, links: map[int][]link.Link{}}, nil
}

// attach puts entry and return probes on the functions of one library
// file (o), for one process (pid) or all (pid 0). On an error, the probes
// of this call that were attached are removed.
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
	var added []link.Link
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
			for _, l := range added {
				l.Close()
			}
			return fmt.Errorf("attach a uprobe to %s in %q (offset %#x): %w", pr.fn, o.Path, o.File[pr.fn], err)
		}
		added = append(added, l)
	}
	p.links[pid] = append(p.links[pid], added...)
	return nil
}

// detach removes the probes of process pid and forgets its calls in
// flight: a call that entered before and returns after would otherwise
// stay counted as active.
func (p *probes) detach(pid int) error {
	var errs []error
	for _, l := range p.links[pid] {
		errs = append(errs, l.Close())
	}
	delete(p.links, pid)
	if pid != 0 {
		forgetCalls(p.coll.Maps["ortel_runs"], uint32(pid))
		forgetCalls(p.coll.Maps["ortel_creates"], uint32(pid))
	}
	return errors.Join(errs...)
}

// count is how many probes are attached.
func (p *probes) count() int {
	n := 0
	for _, ls := range p.links {
		n += len(ls)
	}
	return n
}

// forgetCalls deletes process pid's entries from the probes' map of
// started calls (keyed by pid<<32 | tid).
func forgetCalls(m *ebpf.Map, pid uint32) {
	var key uint64
	var val [valSize]byte
	var keys []uint64
	it := m.Iterate()
	for it.Next(&key, &val) {
		if uint32(key>>32) == pid {
			keys = append(keys, key)
		}
	}
	for _, k := range keys {
		_ = m.Delete(k) // gone already: nothing to forget
	}
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
	for _, ls := range p.links {
		for _, l := range ls {
			errs = append(errs, l.Close())
		}
	}
	p.links = map[int][]link.Link{}
	p.coll.Close()
	return errors.Join(errs...)
}
