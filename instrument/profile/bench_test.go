package profile

import (
	"bytes"
	"encoding/json"
	"io"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"
)

// benchSize is the size of the profile the benchmarks read: the real profile
// repeated, held in memory so that only parsing is measured.
const benchSize = 32 << 20

// jsonEvent mirrors, for encoding/json, every field the Reader decodes.
type jsonEvent struct {
	Cat  string `json:"cat"`
	Name string `json:"name"`
	Ph   string `json:"ph"`
	PID  int64  `json:"pid"`
	TID  int64  `json:"tid"`
	TS   int64  `json:"ts"`
	Dur  int64  `json:"dur"`
	Args struct {
		OpName          string               `json:"op_name"`
		Provider        string               `json:"provider"`
		NodeIndex       string               `json:"node_index"`
		ActivationSize  string               `json:"activation_size"`
		ParameterSize   string               `json:"parameter_size"`
		OutputSize      string               `json:"output_size"`
		InputTypeShape  []map[string][]int64 `json:"input_type_shape"`
		OutputTypeShape []map[string][]int64 `json:"output_type_shape"`
		Threads         *struct {
			MainThread struct {
				PoolName            string  `json:"thread_pool_name"`
				BlockSize           []int64 `json:"block_size"`
				Distribution        int64   `json:"Distribution"`
				DistributionEnqueue int64   `json:"DistributionEnqueue"`
				Run                 int64   `json:"Run"`
				Wait                int64   `json:"Wait"`
				WaitRevoke          int64   `json:"WaitRevoke"`
			} `json:"main_thread"`
			SubThreads map[string]struct {
				NumRun int64 `json:"num_run"`
				Core   int64 `json:"core"`
			} `json:"sub_threads"`
		} `json:"thread_scheduling_stats"`
	} `json:"args"`
}

// peakHeapMB runs f once and returns by how many MiB the live heap grew
// above its level before f, at most, sampling every 100µs.
func peakHeapMB(f func()) float64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	base := read()
	var (
		peak uint64
		wg   sync.WaitGroup
	)
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(100 * time.Microsecond)
		defer t.Stop()
		for {
			if v := read(); v > peak {
				peak = v
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	f()
	close(stop)
	wg.Wait()
	if v := read(); v > peak {
		peak = v
	}
	if peak < base {
		return 0
	}
	return float64(peak-base) / (1 << 20)
}

// Last ortel results, for the peers' speedup metrics.
var ortelNsPerByte, ortelCPUNsPerByte float64

// loop runs parse b.N times (b.Loop) and returns the wall and CPU time per
// byte of data.
func loop(b *testing.B, size int, parse func()) (wallNsPerByte, cpuNsPerByte float64) {
	b.SetBytes(int64(size))
	b.ReportAllocs()
	n := 0
	cpu0 := cpuTime()
	for b.Loop() {
		parse()
		n++
	}
	cpu := cpuTime() - cpu0
	wallNsPerByte = float64(b.Elapsed().Nanoseconds()) / float64(n) / float64(size)
	cpuNsPerByte = float64(cpu.Nanoseconds()) / float64(n) / float64(size)
	if cpu > 0 {
		b.ReportMetric(float64(size)/float64(1<<20)/(cpu.Seconds()/float64(n)), "cpu-MB/s")
	}
	return wallNsPerByte, cpuNsPerByte
}

func BenchmarkReader(b *testing.B) {
	data := enlarge(b, loadReal(b), benchSize)
	events := 0

	b.Run("ortel", func(b *testing.B) {
		parse := func() {
			r := NewReader(bytes.NewReader(data))
			n := 0
			for {
				_, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
				n++
			}
			events = n
		}
		peak := peakHeapMB(parse)
		ortelNsPerByte, ortelCPUNsPerByte = loop(b, len(data), parse)
		b.ReportMetric(peak, "peak-MB")
		b.ReportMetric(ortelNsPerByte*float64(len(data))/float64(events), "ns/event")
	})

	// speedup reports how many times faster ortel read the same bytes, by
	// wall time and by CPU time (the steadier one on a busy machine).
	speedup := func(b *testing.B, wall, cpu float64) {
		if ortelNsPerByte > 0 {
			b.ReportMetric(wall/ortelNsPerByte, "ortel-speedup-x")
		}
		if ortelCPUNsPerByte > 0 && cpu > 0 {
			b.ReportMetric(cpu/ortelCPUNsPerByte, "ortel-cpu-speedup-x")
		}
	}

	b.Run("encoding_json", func(b *testing.B) {
		parse := func() {
			var evs []jsonEvent
			if err := json.Unmarshal(data, &evs); err != nil {
				b.Fatal(err)
			}
			if events > 0 && len(evs) != events {
				b.Fatalf("encoding/json read %d events, ortel %d", len(evs), events)
			}
		}
		peak := peakHeapMB(parse)
		wall, cpu := loop(b, len(data), parse)
		b.ReportMetric(peak, "peak-MB")
		speedup(b, wall, cpu)
	})

	b.Run("encoding_json_stream", func(b *testing.B) {
		parse := func() {
			d := json.NewDecoder(bytes.NewReader(data))
			if _, err := d.Token(); err != nil { // '['
				b.Fatal(err)
			}
			n := 0
			var ev jsonEvent
			for d.More() {
				ev = jsonEvent{}
				if err := d.Decode(&ev); err != nil {
					b.Fatal(err)
				}
				n++
			}
			if events > 0 && n != events {
				b.Fatalf("encoding/json read %d events, ortel %d", n, events)
			}
		}
		peak := peakHeapMB(parse)
		wall, cpu := loop(b, len(data), parse)
		b.ReportMetric(peak, "peak-MB")
		speedup(b, wall, cpu)
	})
}
