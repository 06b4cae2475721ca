package profimport

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/otel/attribute"

	"github.com/ortel-dev/ortel/semconv"
)

// collectSink keeps every span it is given.
type collectSink struct{ spans []Span }

func (s *collectSink) Write(_ context.Context, batch []Span) error {
	for _, sp := range batch {
		sp.Attrs = append([]attribute.KeyValue(nil), sp.Attrs...)
		s.spans = append(s.spans, sp)
	}
	return nil
}

func (s *collectSink) Close() error { return nil }

// TestImportCopiesAndFallbackSpans imports an accelerated profile (the
// WebGPU fallback excerpt of package analysis' testdata, see its
// providers_test.go): every Memcpy node becomes an operator span of its own
// with its op type, the provider it ran on and the bytes it moved, and the
// nodes that fell back carry the CPU provider, so a tracing backend finds
// both by attribute.
func TestImportCopiesAndFallbackSpans(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "analysis", "testdata", "providers", "webgpu_fallback.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var sink collectSink
	st, err := Import(context.Background(), f, &sink, Config{Model: "decoder"})
	if err != nil {
		t.Fatal(err)
	}
	if st.Runs != 1 || st.Nodes != 12 {
		t.Fatalf("stats = %+v, want 1 run and 12 operator spans", st)
	}
	type want struct {
		op, provider string
		outBytes     int64
	}
	wants := map[string]want{
		"Memcpy_token_58": {"MemcpyToHost", "WebGpuExecutionProvider", 65},
		"Memcpy_token_59": {"MemcpyFromHost", "WebGpuExecutionProvider", 65},
		"Memcpy_token_60": {"MemcpyFromHost", "WebGpuExecutionProvider", 4},
		"/Unsqueeze":      {"Unsqueeze", "CPUExecutionProvider", 65},
		"/Less":           {"Less", "WebGpuExecutionProvider", 65},
	}
	for _, sp := range sink.spans {
		attrs := attribute.NewSet(sp.Attrs...)
		name, _ := attrs.Value(semconv.OnnxruntimeNodeNameKey)
		w, ok := wants[name.AsString()]
		if !ok {
			continue
		}
		delete(wants, name.AsString())
		op, _ := attrs.Value(semconv.OnnxruntimeNodeOpTypeKey)
		prov, _ := attrs.Value(semconv.OnnxruntimeExecutionProviderKey)
		out, _ := attrs.Value(semconv.OnnxruntimeNodeOutputSizeKey)
		if sp.Name != w.op || op.AsString() != w.op || prov.AsString() != w.provider || out.AsInt64() != w.outBytes {
			t.Errorf("span %q: name %q, op_type %q, provider %q, output_size %d; want %+v", name.AsString(), sp.Name, op.AsString(), prov.AsString(), out.AsInt64(), w)
		}
		if !sp.Parent.IsValid() {
			t.Errorf("span %q has no parent run", name.AsString())
		}
	}
	if len(wants) != 0 {
		t.Errorf("no span for %v", wants)
	}
}
