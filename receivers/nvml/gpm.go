//go:build linux && cgo

package nvml

import "github.com/NVIDIA/go-nvml/pkg/nvml"

// gpmState holds the two GPM samples of a GPU. GPM (GPU Performance
// Monitoring, Hopper and newer) computes its metrics between two samples:
// each collection takes a sample into the older buffer and asks for the
// metrics between it and the previous one, so the values are averages
// over the collection interval.
type gpmState struct {
	samples [2]nvml.GpmSample
	cur     int  // the buffer the next sample goes into
	primed  bool // the other buffer holds a sample
}

// newGPM allocates the two samples, or returns the failing return code.
func newGPM(lib nvml.Interface) (*gpmState, nvml.Return) {
	st := &gpmState{}
	for i := range st.samples {
		s, ret := lib.GpmSampleAlloc()
		if ret != nvml.SUCCESS {
			st.free()
			return nil, ret
		}
		st.samples[i] = s
	}
	return st, nvml.SUCCESS
}

// free releases the samples.
func (st *gpmState) free() {
	for i, s := range st.samples {
		if s != nil {
			s.Free()
			st.samples[i] = nil
		}
	}
}

func (g *gpu) readGPM(r *Receiver, s *sample) {
	if g.gpm == nil || g.skip[rGPM] {
		return
	}
	st := g.gpm
	cur := st.samples[st.cur]
	if !g.check(s, rGPM, r.lib.GpmSampleGet(g.dev, cur)) {
		if g.skip[rGPM] {
			st.free()
			g.gpm = nil
		}
		return
	}
	if st.primed {
		get := &nvml.GpmMetricsGetType{
			Version:    nvml.GPM_METRICS_GET_VERSION,
			NumMetrics: uint32(len(gpmMetrics)),
			Sample1:    st.samples[1-st.cur],
			Sample2:    cur,
		}
		for i, m := range gpmMetrics {
			get.Metrics[i].MetricId = uint32(m.id)
		}
		if g.check(s, rGPM, r.lib.GpmMetricsGet(get)) {
			for i, m := range gpmMetrics {
				// A metric this GPU cannot compute comes back with its
				// own error: left out.
				got := get.Metrics[i]
				switch {
				case got.NvmlReturn != uint32(nvml.SUCCESS) || got.Value < 0:
				case m.percent:
					s.gpm[i] = some(got.Value / 100)
				default:
					s.gpm[i] = some(got.Value * (1 << 20))
				}
			}
		}
	}
	st.primed = true
	st.cur = 1 - st.cur
}
