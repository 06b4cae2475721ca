//go:build !linux

package attach

import (
	"context"
	"errors"
)

// Status says whether attach can work on this machine, and why not.
type Status struct {
	Available  bool   `json:"available"`
	Reason     string `json:"reason,omitempty"`
	Kernel     string `json:"kernel"`
	Privileged bool   `json:"privileged"`
	Uprobes    bool   `json:"uprobes"`
	BTF        bool   `json:"btf"`
}

// Check reports that attach needs Linux.
func Check() Status { return Status{Reason: "attach needs Linux (eBPF uprobes)"} }

// Tracer is unsupported off Linux.
type Tracer struct{}

// Stats counts what a Tracer saw.
type Stats struct{ Runs, Errors, Sessions, Bad, Lost, Spans, Shed int64 }

// StopReason says why Run returned.
type StopReason int

// Why Run returns.
const (
	StoppedByContext StopReason = iota
	TargetsExited
)

var errUnsupported = errors.New("attach needs Linux (eBPF uprobes)")

// Start fails off Linux.
func Start(Config) (*Tracer, error)                       { return nil, errUnsupported }
func (t *Tracer) Run(context.Context) (StopReason, error) { return StoppedByContext, errUnsupported }
func (t *Tracer) Close() error                            { return nil }
func (t *Tracer) Stats() Stats                            { return Stats{} }
func (t *Tracer) Targets() []Target                       { return nil }
func (t *Tracer) Libraries() []Offsets                    { return nil }

// Fleet is unsupported off Linux.
type Fleet struct{}

// FleetStats counts what a Fleet did.
type FleetStats struct {
	Stats
	Attached, Members, Waiting, Probes int
	Windows, Failed                    int64
}

// ErrProcessLimit and ErrNodeLimit are Fleet.Add's limits.
var (
	ErrProcessLimit = errors.New("it needs more probes than the limit per process")
	ErrNodeLimit    = errors.New("the node's probe limit is reached")
)

// NewFleet fails off Linux.
func NewFleet(...Option) (*Fleet, error)   { return nil, errUnsupported }
func (f *Fleet) Share() float64            { return 1 }
func (f *Fleet) Add(int) error             { return errUnsupported }
func (f *Fleet) Remove(int) error          { return nil }
func (f *Fleet) Run(context.Context) error { return errUnsupported }
func (f *Fleet) Close() error              { return nil }
func (f *Fleet) Stats() FleetStats         { return FleetStats{} }
func (f *Fleet) ProbesOn(int) int          { return 0 }
func (f *Fleet) LastError() error          { return nil }
