package profimport

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"testing"

	"github.com/ortel-dev/ortel/test/otlptest"
)

// BenchmarkImport converts a 64 MB profile of real PaddleOCR det runs (ORT
// 1.30.0) into OTLP/JSON written to io.Discard, beside encoding/json
// decoding the same bytes event by event, in one invocation (b.Run order
// interleaves nothing: compare the ns/op, measured back to back). The
// end-to-end figure with a real file, peak RSS and python is `make
// bench-import`.
func BenchmarkImport(b *testing.B) {
	data, c := synth(b, "det_ort1.30.0.json.gz", 64<<20, false)
	b.Run("ortel", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			st, err := Import(context.Background(), bytes.NewReader(data), NewFileSink(io.Discard, "discard", testResource(), testScope), Config{})
			if err != nil || st.Nodes != c.NodeEvents {
				b.Fatalf("%+v %v", st, err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		type event struct {
			Cat, Name, Ph string
			PID, TID      int64
			TS, Dur       int64
			Args          map[string]any
		}
		for b.Loop() {
			dec := json.NewDecoder(bytes.NewReader(data))
			if _, err := dec.Token(); err != nil {
				b.Fatal(err)
			}
			for dec.More() {
				var e event
				if err := dec.Decode(&e); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// BenchmarkImportOTLP sends a 16 MB profile of real det runs to the
// in-process OTLP/gRPC receiver, each batch acknowledged before the next
// is sent: the OTLP path's throughput (MB of profile per second).
func BenchmarkImportOTLP(b *testing.B) {
	data, c := synth(b, "det_ort1.30.0.json.gz", 16<<20, false)
	rcv, err := otlptest.Start()
	if err != nil {
		b.Fatal(err)
	}
	defer rcv.Close()
	ctx := context.Background()
	sink, err := NewClientSink(ctx, grpcClient(rcv.Endpoint()), rcv.Endpoint(), testResource(), testScope)
	if err != nil {
		b.Fatal(err)
	}
	defer sink.Close()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		st, err := Import(ctx, bytes.NewReader(data), sink, Config{})
		if err != nil || st.Nodes != c.NodeEvents {
			b.Fatalf("%+v %v", st, err)
		}
	}
}
