// Package hardware starts ortel's hardware receivers together — cpu, memory,
// process, perf, rapl, thermal, nvml — for `ortel agent`, `ortel doctor` and
// `ortel bench`, records which are available and why the others are not, and
// samples them during a bench's measured phase into the report's hardware
// section (CPU and GPU utilization, peak RSS, power, energy per source, and
// joules per inference).
package hardware
