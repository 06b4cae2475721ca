package instrument

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	ort "github.com/yalue/onnxruntime_go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/ortel-dev/ortel/internal/onnxgen"
	"github.com/ortel-dev/ortel/semconv"
	"github.com/ortel-dev/ortel/test/testenv"
)

// histPoint returns the single data point of a float64 histogram.
func histPoint(t *testing.T, rm metricdata.ResourceMetrics, name string) metricdata.HistogramDataPoint[float64] {
	t.Helper()
	m, ok := metricByName(rm, name)
	if !ok {
		t.Fatalf("metric %s not recorded", name)
	}
	h, ok := m.Data.(metricdata.Histogram[float64])
	if !ok || len(h.DataPoints) != 1 {
		t.Fatalf("metric %s: want one float64 histogram point, got %T %+v", name, m.Data, m.Data)
	}
	return h.DataPoints[0]
}

// int64HistPoints returns the points of an int64 histogram by gen_ai.token.type
// (or "" when absent).
func int64HistPoints(t *testing.T, rm metricdata.ResourceMetrics, name string) map[string]metricdata.HistogramDataPoint[int64] {
	t.Helper()
	m, ok := metricByName(rm, name)
	if !ok {
		t.Fatalf("metric %s not recorded", name)
	}
	h, ok := m.Data.(metricdata.Histogram[int64])
	if !ok {
		t.Fatalf("metric %s is %T, want an int64 histogram", name, m.Data)
	}
	out := map[string]metricdata.HistogramDataPoint[int64]{}
	for _, dp := range h.DataPoints {
		v, _ := dp.Attributes.Value(semconv.GenAITokenTypeKey)
		out[v.AsString()] = dp
	}
	return out
}

// TestGenerationTimesFromTokenTimestamps scripts a generation in a synctest
// bubble (time moves only when every goroutine waits), so every duration is
// exact: a 30ms prefill, then four tokens 10ms apart.
func TestGenerationTimesFromTokenTimestamps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newProviders(t)
		gens := NewGenerations(p.opts(WithModelName("tiny"))...)
		ctx, g := gens.Start(context.Background(), 12)
		if phaseName(ctx) != "prefill" {
			t.Errorf("Start's context carries %q, want the prefill span", phaseName(ctx))
		}
		time.Sleep(30 * time.Millisecond) // prefill
		ctx = g.Token()
		for i := 0; i < 4; i++ {
			time.Sleep(10 * time.Millisecond)
			ctx = g.Token()
		}
		if phaseName(ctx) != "decode" {
			t.Errorf("Token's context carries %q, want the decode span", phaseName(ctx))
		}
		time.Sleep(5 * time.Millisecond) // cleanup after the last token: not in TPOT
		g.SetKVCacheBytes(4096)
		s := g.End(nil)

		// Against the timestamps the generator recorded.
		if len(s.TokenTimes) != 5 || s.OutputTokens != 5 || s.InputTokens != 12 {
			t.Fatalf("tokens: %d times, %d output, %d input", len(s.TokenTimes), s.OutputTokens, s.InputTokens)
		}
		if want := s.TokenTimes[0].Sub(s.Start); s.TimeToFirstToken != want || want != 30*time.Millisecond {
			t.Errorf("TTFT = %v, token timestamps give %v, want 30ms", s.TimeToFirstToken, want)
		}
		if want := s.TokenTimes[4].Sub(s.TokenTimes[0]) / 4; s.TimePerOutputToken != want || want != 10*time.Millisecond {
			t.Errorf("TPOT = %v, token timestamps give %v, want 10ms", s.TimePerOutputToken, want)
		}
		if s.Decode != 40*time.Millisecond || s.Prefill != 30*time.Millisecond {
			t.Errorf("prefill %v, decode %v", s.Prefill, s.Decode)
		}
		if want := 5 / 0.070; abs(s.TokensPerSecond-want) > 1e-9 {
			t.Errorf("tokens/s = %v, want %v", s.TokensPerSecond, want)
		}
		if abs(s.DecodeTokensPerSecond-100) > 1e-9 {
			t.Errorf("decode tokens/s = %v, want 100", s.DecodeTokensPerSecond)
		}

		rm := p.collect(t)
		ttft := histPoint(t, rm, semconv.GenAIServerTimeToFirstTokenName)
		if ttft.Count != 1 || ttft.Sum != 0.030 {
			t.Errorf("TTFT histogram count %d sum %v, want 1 and 0.030", ttft.Count, ttft.Sum)
		}
		wantBounds := []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0}
		if !slices.Equal(ttft.Bounds, wantBounds) {
			t.Errorf("TTFT bounds %v, want the upstream %v", ttft.Bounds, wantBounds)
		}
		for key, want := range map[attribute.Key]string{
			semconv.GenAIOperationNameKey: "text_completion",
			semconv.GenAIProviderNameKey:  "onnxruntime",
			semconv.GenAIRequestModelKey:  "tiny",
		} {
			if v, _ := ttft.Attributes.Value(key); v.AsString() != want {
				t.Errorf("TTFT attribute %s = %q, want %q", key, v.AsString(), want)
			}
		}
		tpot := histPoint(t, rm, semconv.GenAIServerTimePerOutputTokenName)
		if tpot.Count != 1 || tpot.Sum != 0.010 {
			t.Errorf("TPOT histogram count %d sum %v, want 1 and 0.010", tpot.Count, tpot.Sum)
		}
		if !slices.Equal(tpot.Bounds, []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5}) {
			t.Errorf("TPOT bounds %v", tpot.Bounds)
		}
		tok := int64HistPoints(t, rm, semconv.OrtelGenerationTokensName)
		if tok["input"].Sum != 12 || tok["output"].Sum != 5 {
			t.Errorf("token counts input %d output %d, want 12 and 5", tok["input"].Sum, tok["output"].Sum)
		}
		if kv := int64HistPoints(t, rm, semconv.OrtelGenerationKVCacheSizeName)[""]; kv.Sum != 4096 {
			t.Errorf("KV cache histogram sum %d, want 4096", kv.Sum)
		}
		if tp := histPoint(t, rm, semconv.OrtelGenerationThroughputName); tp.Count != 1 {
			t.Errorf("throughput count %d", tp.Count)
		}

		spans := spansNamed(p.spans, "text_completion tiny")
		if len(spans) != 1 {
			t.Fatalf("generation spans: %d", len(spans))
		}
		gen := spans[0]
		a := attrs(gen.Attributes())
		if a[string(semconv.GenAIUsageInputTokensKey)].AsInt64() != 12 || a[string(semconv.GenAIUsageOutputTokensKey)].AsInt64() != 5 {
			t.Errorf("usage attributes: %v", gen.Attributes())
		}
		if a[string(semconv.OrtelGenerationKVCacheSizeKey)].AsInt64() != 4096 {
			t.Errorf("kv cache attribute: %v", gen.Attributes())
		}
		kids := childrenOf(p.spans)[gen.SpanContext().SpanID()]
		if len(kids) != 2 {
			t.Fatalf("generation has %d children, want prefill and decode", len(kids))
		}
		for _, k := range kids {
			switch k.Name() {
			case "prefill":
				if !k.StartTime().Equal(s.Start) || !k.EndTime().Equal(s.TokenTimes[0]) {
					t.Errorf("prefill span %v..%v, want %v..%v", k.StartTime(), k.EndTime(), s.Start, s.TokenTimes[0])
				}
			case "decode":
				if !k.StartTime().Equal(s.TokenTimes[0]) || !k.EndTime().Equal(s.TokenTimes[4]) {
					t.Errorf("decode span %v..%v, want %v..%v", k.StartTime(), k.EndTime(), s.TokenTimes[0], s.TokenTimes[4])
				}
			default:
				t.Errorf("unexpected child %q", k.Name())
			}
		}
		if !gen.EndTime().Equal(s.End) || s.End.Sub(s.TokenTimes[4]) != 5*time.Millisecond {
			t.Errorf("generation ends %v, stats end %v", gen.EndTime(), s.End)
		}
		// End is idempotent.
		if again := g.End(errors.New("late")); again.TimeToFirstToken != s.TimeToFirstToken || again.Err != nil {
			t.Error("a second End changed the result")
		}
	})
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func TestGenerationEdgeCases(t *testing.T) {
	tests := []struct {
		name     string
		tokens   int
		err      error
		wantTTFT uint64
		wantTPOT uint64
	}{
		{"one token records no TPOT", 1, nil, 1, 0},
		{"failed generation records neither", 3, errors.New("out of memory"), 0, 0},
		{"no token at all", 0, errors.New("prefill failed"), 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProviders(t)
			gens := NewGenerations(p.opts(WithModelName("m"))...)
			_, g := gens.Start(context.Background(), 4)
			for i := 0; i < tt.tokens; i++ {
				g.Token()
			}
			s := g.End(tt.err)
			if s.OutputTokens != tt.tokens {
				t.Errorf("output tokens %d", s.OutputTokens)
			}
			rm := p.collect(t)
			count := func(name string) uint64 {
				m, ok := metricByName(rm, name)
				if !ok {
					return 0
				}
				var n uint64
				for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
					n += dp.Count
				}
				return n
			}
			if n := count(semconv.GenAIServerTimeToFirstTokenName); n != tt.wantTTFT {
				t.Errorf("TTFT count %d, want %d", n, tt.wantTTFT)
			}
			if n := count(semconv.GenAIServerTimePerOutputTokenName); n != tt.wantTPOT {
				t.Errorf("TPOT count %d, want %d", n, tt.wantTPOT)
			}
			gen := spansNamed(p.spans, "text_completion m")[0]
			if (tt.err != nil) != (gen.Status().Code == codes.Error) {
				t.Errorf("status %v with err %v", gen.Status(), tt.err)
			}
			if tt.err != nil {
				if v := attrs(gen.Attributes())[attrErrorType].AsString(); v == "" {
					t.Error("failed generation without error.type")
				}
			}
			if tok := int64HistPoints(t, rm, semconv.OrtelGenerationTokensName); tok["output"].Sum != int64(tt.tokens) {
				t.Errorf("output token count %d", tok["output"].Sum)
			}
		})
	}
}

func TestGenerationsConcurrentSafe(t *testing.T) {
	p := newProviders(t)
	gens := NewGenerations(p.opts(WithModelName("m"))...)
	const workers, each = 8, 25
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Go(func() {
			for i := 0; i < each; i++ {
				_, g := gens.Start(context.Background(), 3)
				for k := 0; k < 4; k++ {
					g.Token()
				}
				g.SetKVCacheBytes(int64(100 * (w + 1)))
				g.End(nil)
			}
		})
	}
	wg.Wait()
	rm := p.collect(t)
	if n := histPoint(t, rm, semconv.GenAIServerTimeToFirstTokenName).Count; n != workers*each {
		t.Errorf("TTFT count %d, want %d", n, workers*each)
	}
	if got := len(spansNamed(p.spans, "text_completion m")); got != workers*each {
		t.Errorf("generation spans %d", got)
	}
	if tok := int64HistPoints(t, rm, semconv.OrtelGenerationTokensName); tok["output"].Sum != 4*workers*each {
		t.Errorf("output tokens %d", tok["output"].Sum)
	}
}

// TestGenerationDrivesRealDecoder runs greedy generation on the synthetic
// decoder through an instrumented session: runs nest under the prefill and
// decode spans, each decode step feeds back the present tensors, and the
// KV-cache bytes match the model's shapes.
func TestGenerationDrivesRealDecoder(t *testing.T) {
	testenv.RequireORT(t)
	cfg := onnxgen.DecoderConfig{Layers: 2, Heads: 2, HeadDim: 8, Vocab: 32, Seed: 3}.WithDefaults()
	path := filepath.Join(t.TempDir(), "decoder.onnx")
	if err := onnxgen.Decoder(cfg).WriteFile(path); err != nil {
		t.Fatal(err)
	}
	p := newProviders(t)
	opts := p.opts(WithModelName("decoder"))
	sess, err := NewDynamicSession(context.Background(), path, cfg.InputNames(), cfg.OutputNames(), nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close(context.Background())
	gens := NewGenerations(opts...)

	const prompt, n = 5, 4
	empty := func() ort.Value {
		v, err := ort.NewTensor(ort.NewShape(1, int64(cfg.Heads), 0, int64(cfg.HeadDim)), []float32{})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	past := make([]ort.Value, 2*cfg.Layers)
	for i := range past {
		past[i] = empty()
	}
	ids := []int64{1, 2, 3, 4, 5}
	ctx, g := gens.Start(context.Background(), prompt)
	total := 0
	var outs []ort.Value
	for step := 0; step < n; step++ {
		in, _ := ort.NewTensor(ort.NewShape(1, int64(len(ids))), ids)
		mask := make([]int64, total+len(ids))
		for i := range mask {
			mask[i] = 1
		}
		m, _ := ort.NewTensor(ort.NewShape(1, int64(len(mask))), mask)
		outs = make([]ort.Value, 1+2*cfg.Layers)
		if err := sess.Run(ctx, append([]ort.Value{in, m}, past...), outs); err != nil {
			t.Fatal(err)
		}
		in.Destroy()
		m.Destroy()
		total += len(ids)
		logits := outs[0].(*ort.Tensor[float32]).GetData()
		last := logits[len(logits)-cfg.Vocab:]
		ids = []int64{int64(slices.Index(last, slices.Max(last)))}
		ctx = g.Token()
		if step == n-1 {
			g.SetKVCacheBytes(KVCacheBytes(cfg.OutputNames(), outs))
		}
		for _, v := range past {
			v.Destroy()
		}
		copy(past, outs[1:])
		outs[0].Destroy()
	}
	s := g.End(nil)
	for _, v := range past {
		v.Destroy()
	}
	// present tensors after the last step hold prompt + n - 1 positions.
	want := int64(2*cfg.Layers*cfg.Heads*cfg.HeadDim*(prompt+n-1)) * 4
	if s.KVCacheBytes != want {
		t.Errorf("KV cache bytes %d, want %d", s.KVCacheBytes, want)
	}
	gen := spansNamed(p.spans, "text_completion decoder")
	if len(gen) != 1 {
		t.Fatalf("generation spans %d", len(gen))
	}
	kids := childrenOf(p.spans)
	phases := map[string]sdktrace.ReadOnlySpan{}
	for _, k := range kids[gen[0].SpanContext().SpanID()] {
		phases[k.Name()] = k
	}
	if got := len(kids[phases["prefill"].SpanContext().SpanID()]); got != 1 {
		t.Errorf("runs under prefill: %d, want 1", got)
	}
	if got := len(kids[phases["decode"].SpanContext().SpanID()]); got != n-1 {
		t.Errorf("runs under decode: %d, want %d", got, n-1)
	}
	for _, r := range kids[phases["decode"].SpanContext().SpanID()] {
		if r.Name() != "run decoder" {
			t.Errorf("decode child %q", r.Name())
		}
	}
}

func TestKVCacheBytes(t *testing.T) {
	testenv.RequireORT(t)
	mk := func(shape ...int64) ort.Value {
		n := int64(1)
		for _, d := range shape {
			n *= d
		}
		v, err := ort.NewTensor(ort.NewShape(shape...), make([]float32, n))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { v.Destroy() })
		return v
	}
	i64, _ := ort.NewTensor(ort.NewShape(1, 3), []int64{1, 2, 3})
	defer i64.Destroy()
	names := []string{"logits", "present.0.key", "present.0.value", "present_key_values", "other", "present.1.key"}
	vals := []ort.Value{mk(1, 2, 8), mk(1, 2, 5, 4), mk(1, 2, 5, 4), i64, mk(4), nil}
	want := int64(2*(1*2*5*4)*4 + 3*8)
	if got := KVCacheBytes(names, vals); got != want {
		t.Errorf("KVCacheBytes = %d, want %d", got, want)
	}
	if got := tensorBytes(nil); got != 0 {
		t.Errorf("tensorBytes(nil) = %d", got)
	}
	if got := KVCacheBytes(names, vals[:1]); got != 0 {
		t.Errorf("short values: %d, want 0 (no present tensor among them)", got)
	}
}

// phaseName is the name of the span in ctx (an SDK span).
func phaseName(ctx context.Context) string {
	if ro, ok := trace.SpanFromContext(ctx).(sdktrace.ReadOnlySpan); ok {
		return ro.Name()
	}
	return ""
}
