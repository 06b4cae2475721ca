//go:build !linux

package cpu

import (
	"context"
	"errors"
	"math"
	"runtime"
	"strconv"
	"strings"

	"github.com/shirou/gopsutil/v4/cpu"
	"github.com/shirou/gopsutil/v4/load"

	"github.com/ortel-dev/ortel/receivers"
	"github.com/ortel-dev/ortel/receivers/internal/procfs"
)

// psSource reads CPU times and load averages through gopsutil on systems
// without Linux's /proc. Context switches, interrupts and frequencies are
// not available there.
type psSource struct{ modes uint8 }

// Reported once for the readings this operating system lacks.
var (
	errNoCtxt = errors.New("ortel.system.context_switches: not available on " + runtime.GOOS)
	errNoIntr = errors.New("ortel.system.interrupts: not available on " + runtime.GOOS)
	errNoFreq = errors.New("system.cpu.frequency: not available on " + runtime.GOOS)
	errNoLoad = errors.New("ortel.system.load_average: not available on " + runtime.GOOS)
)

func newSource(_ config, _ want) (source, error) {
	if _, err := cpu.Times(true); err != nil {
		return nil, receivers.Unsupported("cpu", "cannot read per-CPU times on "+runtime.GOOS, err)
	}
	// The modes each system really counts; the others would be made-up zeros.
	modes := uint8(1<<modeUser | 1<<modeSystem | 1<<modeIdle)
	switch runtime.GOOS {
	case "darwin":
		modes |= 1 << modeNice
	case "windows":
		modes |= 1 << modeInterrupt
	default: // the BSDs
		modes |= 1<<modeNice | 1<<modeInterrupt
	}
	return &psSource{modes: modes}, nil
}

// hz: gopsutil gives seconds; the sample keeps microseconds.
func (s *psSource) hz() float64 { return 1e6 }

func (s *psSource) close() error { return nil }

func (s *psSource) read(ctx context.Context, smp *sample, w want, fail *procfs.Failures) bool {
	smp.reset()
	times, err := cpu.TimesWithContext(ctx, true)
	if err != nil {
		fail.Fail(failStat, err)
	} else {
		fail.OK(failStat)
		for i, t := range times {
			n := i
			if v, err := strconv.Atoi(strings.TrimPrefix(t.CPU, "cpu")); err == nil && v >= 0 && v < 1<<16 {
				n = v
			}
			c := smp.cpu(n)
			c.t = [numModes]uint64{
				micros(t.User), micros(t.Nice), micros(t.System), micros(t.Idle),
				micros(t.Iowait), micros(t.Irq + t.Softirq), micros(t.Steal),
			}
			c.modes, c.ok = s.modes, true
			smp.online++
			for m := range numModes {
				smp.total.t[m] += c.t[m]
			}
		}
		smp.total.modes, smp.total.ok = s.modes, smp.online > 0
	}
	if w.ctxt {
		fail.Fail(failCtxt, errNoCtxt)
	}
	if w.intr {
		fail.Fail(failIntr, errNoIntr)
	}
	if w.freq {
		fail.Fail(failFreq, errNoFreq)
	}
	if w.load {
		if runtime.GOOS == "windows" {
			// gopsutil emulates it on Windows with a background goroutine.
			fail.Fail(failLoad, errNoLoad)
		} else if a, err := load.AvgWithContext(ctx); err != nil {
			fail.Fail(failLoad, err)
		} else {
			fail.OK(failLoad)
			smp.load, smp.loadOK = [3]float64{a.Load1, a.Load5, a.Load15}, true
		}
	}
	return smp.online > 0
}

func micros(sec float64) uint64 {
	if sec <= 0 || math.IsNaN(sec) {
		return 0
	}
	return uint64(sec*1e6 + 0.5)
}
