// Command vad-stream runs Silero VAD (voice activity detection) over an
// audio stream frame by frame, as a speech service's front end does, with
// every frame a stage span and every model call a run span. It shows a
// stateful model: the recurrent state the model returns is fed back with the
// next frame.
//
// The audio is synthetic (silence, then voiced-like harmonic bursts), so the
// example needs only the fetched model:
//
//	make setup
//	go run ./examples/vad-stream -seconds 4
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/ortel-dev/ortel/instrument"
	"github.com/ortel-dev/ortel/instrument/ortlib"
)

const (
	sampleRate = 16000
	frame      = 512 // samples per model call at 16 kHz (32 ms)
)

func main() {
	seconds := flag.Float64("seconds", 4, "length of the synthetic stream")
	model := flag.String("model", filepath.Join(ortlib.CacheDir(), "models", "silero_vad_v5.onnx"), "Silero VAD v5 model file")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, *seconds, *model); err != nil {
		fmt.Fprintln(os.Stderr, "vad-stream:", err)
		os.Exit(1)
	}
}

// segment is a stretch of detected speech, in seconds.
type segment struct{ start, end float64 }

func run(ctx context.Context, w io.Writer, seconds float64, path string) error {
	if seconds <= 0 || seconds > 600 {
		return fmt.Errorf("-seconds %v: want more than 0 and at most 600", seconds)
	}
	if _, err := ortlib.Init(); err != nil {
		return err
	}
	tel, err := setupOTel(ctx, "vad-stream")
	if err != nil {
		return err
	}
	if !tel.exported {
		fmt.Fprintln(w, "no OTEL_EXPORTER_OTLP_ENDPOINT set: telemetry is recorded, not exported")
	}
	// Deferred first, so it runs after the session's Close.
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := tel.shutdown(sctx); err != nil {
			fmt.Fprintln(os.Stderr, "vad-stream: telemetry:", err)
		}
	}()
	opts := []instrument.Option{
		instrument.WithTracerProvider(tel.tp),
		instrument.WithMeterProvider(tel.mp),
		instrument.WithModelName("silero-vad"),
		// Every 50th frame, and the 5 frames after one slower than 5 ms. A
		// profiled VAD frame costs ONNX Runtime ~0.5 ms against 0.1 ms, so
		// the sampled frames are capped at 2% of the CPU the frames take:
		// the interval lengthens to what that pays for.
		instrument.WithProfiling(instrument.Profiling{EveryN: 50, SlowRun: 5 * time.Millisecond, MaxCPUShare: 0.02}),
	}
	sess, err := instrument.NewDynamicSession(ctx, path, []string{"input", "state", "sr"}, []string{"output", "stateN"}, nil, opts...)
	if err != nil {
		return err
	}
	defer sess.Close(ctx)
	pipeline := instrument.NewPipeline("vad", opts...)

	audio := syntheticAudio(seconds)
	state := make([]float32, 2*1*128)
	sr, err := ort.NewScalar(int64(sampleRate))
	if err != nil {
		return err
	}
	defer sr.Destroy()
	var segs []segment
	speaking := false
	tracer := tel.tp.Tracer("vad-stream")
	sctx, stream := tracer.Start(ctx, "audio stream")
	defer stream.End()
	for off := 0; off+frame <= len(audio); off += frame {
		fctx, stage := pipeline.StartStage(sctx, "vad frame")
		prob, next, err := step(fctx, sess, audio[off:off+frame], state, sr)
		stage.End(err)
		if err != nil {
			return err
		}
		state = next
		t := float64(off) / sampleRate
		switch {
		case prob > 0.5 && !speaking:
			speaking = true
			segs = append(segs, segment{start: t})
		case prob < 0.35 && speaking:
			speaking = false
			segs[len(segs)-1].end = t
		}
	}
	if speaking {
		segs[len(segs)-1].end = float64(len(audio)) / sampleRate
	}
	fmt.Fprintf(w, "%d frames of %d ms, %d speech segments\n", len(audio)/frame, frame*1000/sampleRate, len(segs))
	for _, s := range segs {
		fmt.Fprintf(w, "  speech %.2fs – %.2fs\n", s.start, s.end)
	}
	return nil
}

// step runs the model on one frame and returns the speech probability and
// the next state.
func step(ctx context.Context, s *instrument.DynamicSession, samples, state []float32, sr ort.Value) (float32, []float32, error) {
	in, err := ort.NewTensor(ort.NewShape(1, frame), samples)
	if err != nil {
		return 0, nil, err
	}
	defer in.Destroy()
	st, err := ort.NewTensor(ort.NewShape(2, 1, 128), state)
	if err != nil {
		return 0, nil, err
	}
	defer st.Destroy()
	outs := []ort.Value{nil, nil}
	if err := s.Run(ctx, []ort.Value{in, st, sr}, outs); err != nil {
		return 0, nil, err
	}
	defer outs[0].Destroy()
	defer outs[1].Destroy()
	prob := outs[0].(*ort.Tensor[float32]).GetData()[0]
	next := append([]float32(nil), outs[1].(*ort.Tensor[float32]).GetData()...)
	return prob, next, nil
}

// syntheticAudio is silence with faint noise, then a harmonic, amplitude-
// modulated "voice" between 25% and 75% of the stream.
func syntheticAudio(seconds float64) []float32 {
	n := int(seconds * sampleRate)
	rng := rand.New(rand.NewPCG(1, 2))
	a := make([]float32, n)
	for i := range a {
		t := float64(i) / sampleRate
		v := 0.002 * (rng.Float64()*2 - 1)
		if i > n/4 && i < 3*n/4 {
			f0 := 140 + 30*math.Sin(2*math.Pi*0.7*t)
			env := 0.5 + 0.5*math.Sin(2*math.Pi*4*t)
			for h := 1; h <= 8; h++ {
				v += env * 0.25 / float64(h) * math.Sin(2*math.Pi*f0*float64(h)*t)
			}
		}
		a[i] = float32(v)
	}
	return a
}
