// Package interference watches the machine during a measured phase and
// judges whether the phase can be trusted: a verdict, "stable" or
// "disturbed" with its reasons and the share of the phase they held in.
//
// A Monitor samples, every Config.Interval (default 200 ms), these
// sources under Config.HostRoot (default "/"), each judged against a
// threshold per sample (judge.go says why each threshold):
//
//	| source                      | reason kind          | read from                                    |
//	|-----------------------------|----------------------|----------------------------------------------|
//	| CPU steal on the cores      | steal                | /proc/stat, per CPU                          |
//	| other processes' CPU        | co-runner            | /proc/stat minus /proc/PID/task/*/stat       |
//	| runnable tasks vs CPUs      | run-queue            | /proc/stat procs_running                     |
//	| pressure stall information  | psi-cpu/memory/io    | /proc/pressure/{cpu,memory,io} some total    |
//	| thermal throttling events   | throttling           | /sys/devices/system/cpu/cpu*/thermal_throttle |
//	| involuntary context switches| involuntary-switches | /proc/PID/task/*/status                      |
//	| major page faults           | page-faults          | /proc/PID/stat                               |
//
// A source the kernel lacks (PSI before Linux 4.20 or disabled,
// thermal_throttle outside Intel bare metal) is listed as unavailable,
// never an error. Drift, a trend of latency over the phase, is judged
// from the latencies themselves (Drift, a Mann-Kendall test on block
// medians).
//
// The Verdict is report.Measurement; the bench puts it in report.json's
// measurement object and its one-line form in the summary.
package interference
