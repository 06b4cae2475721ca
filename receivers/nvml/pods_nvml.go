//go:build linux && cgo

package nvml

import (
	"slices"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/ortel-dev/ortel/receivers/podattr"
	"github.com/ortel-dev/ortel/semconv"
)

// procSet is the attribute sets of one process's readings on one GPU.
type procSet struct {
	memory []metric.ObserveOption    // nvidia.gpu.process.memory.usage
	util   [3][]metric.ObserveOption // nvidia.gpu.process.utilization: general, encoder, decoder
}

// wantProcess reports whether pid's readings on g are reported and, when
// they are, records their attribute sets in s for the observation: the
// WithPIDs sets built at discovery or, with WithAllProcesses, sets with
// the process's pod, built the first time g sees it. It runs on g's
// reading goroutine only (one at a time per GPU), which owns g.procs.
func (g *gpu) wantProcess(r *Receiver, s *sample, pid int) bool {
	if _, ok := s.procSets[pid]; ok {
		return true
	}
	var ps procSet
	switch {
	case !r.cfg.allProcs:
		m, ok := g.attrs.procMemory[pid]
		if !ok {
			return false
		}
		ps = procSet{memory: m, util: g.attrs.procUtil[pid]}
	default:
		var ok bool
		if ps, ok = g.procs[pid]; !ok {
			ps = newProcSet(g.info.UUID, pid, r.cfg.Root)
			if g.procs == nil {
				g.procs = map[int]procSet{}
			}
			g.procs[pid] = ps
		}
	}
	if s.procSets == nil {
		s.procSets = map[int]procSet{}
	}
	s.procSets[pid] = ps
	return true
}

// newProcSet builds the sets of process pid on the GPU with this UUID:
// hw.id, process.pid and the process's pod, read from
// root/proc/PID/cgroup (none when unreadable: the pid alone).
func newProcSet(uuid string, pid int, root string) procSet {
	base := []attribute.KeyValue{semconv.HwID(uuid), semconv.ProcessPID(pid)}
	if pod, err := podattr.Read(root, pid, nil); err == nil {
		base = append(base, pod.Attributes()...)
	}
	set := func(kv ...attribute.KeyValue) []metric.ObserveOption {
		return []metric.ObserveOption{metric.WithAttributeSet(attribute.NewSet(append(slices.Clone(base), kv...)...))}
	}
	return procSet{
		memory: set(),
		util:   [3][]metric.ObserveOption{set(semconv.HwGPUTaskGeneral), set(semconv.HwGPUTaskEncoder), set(semconv.HwGPUTaskDecoder)},
	}
}

// forgetProcesses drops the cached sets of processes not in this
// reading (exited, or moved off the GPU): a pid the kernel reuses later
// is read again, with its own pod.
func (g *gpu) forgetProcesses(s *sample) {
	for pid := range g.procs {
		if _, ok := s.procSets[pid]; !ok {
			delete(g.procs, pid)
		}
	}
}
