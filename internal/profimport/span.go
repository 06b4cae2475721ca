package profimport

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	mrand "math/rand/v2"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// Span is one finished span, ready to write.
type Span struct {
	TraceID    trace.TraceID
	SpanID     trace.SpanID
	Parent     trace.SpanID // zero for a root span
	Name       string
	Start, End int64 // Unix nanoseconds
	Attrs      []attribute.KeyValue
}

// Sink writes spans. Write returns once every span of the batch is written
// or acknowledged, or with an error saying none of the batch is; the caller
// reuses the batch after Write returns. Close flushes and releases the sink;
// a Close error means the last batches may not have been written.
type Sink interface {
	Write(ctx context.Context, batch []Span) error
	Close() error
}

// idGen makes random trace and span ids from a seeded ChaCha8 stream.
type idGen struct{ r *mrand.ChaCha8 }

func newIDGen() idGen {
	var seed [32]byte
	_, _ = rand.Read(seed[:]) // never fails (Go 1.24+)
	return idGen{mrand.NewChaCha8(seed)}
}

func (g idGen) traceID() trace.TraceID {
	var id trace.TraceID
	for id == (trace.TraceID{}) {
		binary.LittleEndian.PutUint64(id[:8], g.r.Uint64())
		binary.LittleEndian.PutUint64(id[8:], g.r.Uint64())
	}
	return id
}

func (g idGen) spanID() trace.SpanID {
	var id trace.SpanID
	for id == (trace.SpanID{}) {
		binary.LittleEndian.PutUint64(id[:], g.r.Uint64())
	}
	return id
}
