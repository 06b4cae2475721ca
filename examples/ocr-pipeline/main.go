// Command ocr-pipeline runs PaddleOCR's three models — text detection,
// direction classification, recognition — as one instrumented pipeline, the
// way an OCR service would: each request is a span, each model a stage under
// it, each model call a run span, and one request in ten has its operators
// profiled, so a trace in Jaeger reads request → stage → run → operator.
//
// The "image" is synthetic (dark strokes on a light page) so the example
// needs nothing but the fetched models:
//
//	make setup
//	go run ./examples/ocr-pipeline -requests 20
//	OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4317 go run ./examples/ocr-pipeline
//
// Without an OTLP endpoint the telemetry is recorded but not exported. The
// example imports public packages only: copy it out of the repository and it
// builds (ortlib finds ONNX Runtime; -models names the model folder).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	ort "github.com/yalue/onnxruntime_go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/ortel-dev/ortel/instrument"
	"github.com/ortel-dev/ortel/instrument/ortlib"
)

// modelFiles are the PaddleOCR models, by the names spans carry.
var modelFiles = map[string]string{
	"paddleocr-det": "ch_PP-OCRv4_det_infer.onnx",
	"paddleocr-cls": "ch_ppocr_mobile_v2.0_cls_infer.onnx",
	"paddleocr-rec": "ch_PP-OCRv4_rec_infer.onnx",
}

func main() {
	requests := flag.Int("requests", 10, "requests to serve")
	size := flag.Int("size", 320, "page size in pixels (a multiple of 32)")
	dir := flag.String("models", filepath.Join(ortlib.CacheDir(), "models"), "folder holding the PaddleOCR models")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, *requests, *size, *dir); err != nil {
		fmt.Fprintln(os.Stderr, "ocr-pipeline:", err)
		os.Exit(1)
	}
}

// ocr holds the three instrumented sessions.
type ocr struct {
	det, cls, rec *instrument.DynamicSession
	pipeline      *instrument.Pipeline
}

func run(ctx context.Context, w io.Writer, requests, size int, modelDir string) error {
	if size <= 0 || size%32 != 0 {
		return fmt.Errorf("-size %d: want a positive multiple of 32 (the detector downsamples by 32)", size)
	}
	if _, err := ortlib.Init(); err != nil {
		return err
	}
	tel, err := setupOTel(ctx, "ocr-pipeline")
	if err != nil {
		return err
	}
	if !tel.exported {
		fmt.Fprintln(w, "no OTEL_EXPORTER_OTLP_ENDPOINT set: telemetry is recorded, not exported")
	}
	// Deferred first, so it runs last: the sessions close before the
	// providers stop, and their last operator spans get out.
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := tel.shutdown(sctx); err != nil {
			fmt.Fprintln(os.Stderr, "ocr-pipeline: telemetry:", err)
		}
	}()
	opts := []instrument.Option{
		instrument.WithTracerProvider(tel.tp),
		instrument.WithMeterProvider(tel.mp),
		// One run in ten is profiled: its operators become spans.
		instrument.WithProfiling(instrument.Profiling{EveryN: 10}),
	}
	o := &ocr{pipeline: instrument.NewPipeline("ocr", opts...)}
	open := func(name, output string) (*instrument.DynamicSession, error) {
		path := filepath.Join(modelDir, modelFiles[name])
		return instrument.NewDynamicSession(ctx, path, []string{"x"}, []string{output}, nil,
			append(opts, instrument.WithModelName(name))...)
	}
	if o.det, err = open("paddleocr-det", "sigmoid_0.tmp_0"); err != nil {
		return err
	}
	defer o.det.Close(ctx)
	if o.cls, err = open("paddleocr-cls", "softmax_0.tmp_0"); err != nil {
		return err
	}
	defer o.cls.Close(ctx)
	if o.rec, err = open("paddleocr-rec", "softmax_11.tmp_0"); err != nil {
		return err
	}
	defer o.rec.Close(ctx)

	tracer := tel.tp.Tracer("ocr-pipeline")
	page := syntheticPage(size)
	for i := 0; i < requests; i++ {
		rctx, span := tracer.Start(ctx, "POST /ocr", trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.Int("request.index", i)))
		start := time.Now()
		lines, chars, err := o.serve(rctx, page, size)
		if err != nil {
			span.RecordError(err)
			span.End()
			return err
		}
		span.SetAttributes(attribute.Int("ocr.lines", lines), attribute.Int("ocr.characters", chars))
		span.End()
		fmt.Fprintf(w, "request %d: %d text lines, %d characters, %s\n", i, lines, chars, time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// serve runs one page through detection, classification and recognition.
func (o *ocr) serve(ctx context.Context, page []float32, size int) (lines, chars int, err error) {
	dctx, stage := o.pipeline.StartStage(ctx, "detect")
	boxes, err := o.detect(dctx, page, size)
	stage.End(err)
	if err != nil {
		return 0, 0, err
	}
	for _, b := range boxes {
		crop := cropResize(page, size, b, 48, 192)
		cctx, stage := o.pipeline.StartStage(ctx, "classify")
		_, err := o.classify(cctx, crop)
		stage.End(err)
		if err != nil {
			return 0, 0, err
		}
		line := cropResize(page, size, b, 48, 320)
		rctx, stage := o.pipeline.StartStage(ctx, "recognize")
		n, err := o.recognize(rctx, line)
		stage.End(err)
		if err != nil {
			return 0, 0, err
		}
		lines++
		chars += n
	}
	return lines, chars, nil
}

// box is a text line found by the detector, in page pixels.
type box struct{ y0, y1, x0, x1 int }

// detect runs the DBNet detector and turns its probability map into line
// boxes: rows whose text probability passes a threshold, grouped.
func (o *ocr) detect(ctx context.Context, page []float32, size int) ([]box, error) {
	in, err := ort.NewTensor(ort.NewShape(1, 3, int64(size), int64(size)), page)
	if err != nil {
		return nil, err
	}
	defer in.Destroy()
	outs := []ort.Value{nil}
	if err := o.det.Run(ctx, []ort.Value{in}, outs); err != nil {
		return nil, err
	}
	defer outs[0].Destroy()
	prob, ok := outs[0].(*ort.Tensor[float32])
	if !ok {
		return nil, errors.New("detector output is not a float tensor")
	}
	p := prob.GetData()
	var boxes []box
	inLine, y0 := false, 0
	for y := 0; y < size; y++ {
		hot := 0
		for x := 0; x < size; x++ {
			if p[y*size+x] > 0.3 {
				hot++
			}
		}
		switch {
		case hot > size/20 && !inLine:
			inLine, y0 = true, y
		case hot <= size/20 && inLine:
			inLine = false
			if y-y0 >= 4 {
				boxes = append(boxes, box{y0, y, 0, size})
			}
		}
	}
	if len(boxes) == 0 { // the synthetic page always has text: fall back to its known lines
		for y := size / 8; y+size/16 < size; y += size / 5 {
			boxes = append(boxes, box{y, y + size/16, size / 16, size - size/16})
		}
	}
	return boxes, nil
}

// classify says whether a line is upside down (class 1).
func (o *ocr) classify(ctx context.Context, crop []float32) (bool, error) {
	in, err := ort.NewTensor(ort.NewShape(1, 3, 48, 192), crop)
	if err != nil {
		return false, err
	}
	defer in.Destroy()
	outs := []ort.Value{nil}
	if err := o.cls.Run(ctx, []ort.Value{in}, outs); err != nil {
		return false, err
	}
	defer outs[0].Destroy()
	d := outs[0].(*ort.Tensor[float32]).GetData()
	return len(d) == 2 && d[1] > d[0], nil
}

// recognize runs the SVTR recognizer and counts the characters of a greedy
// CTC decoding (class 0 is the CTC blank).
func (o *ocr) recognize(ctx context.Context, line []float32) (int, error) {
	in, err := ort.NewTensor(ort.NewShape(1, 3, 48, 320), line)
	if err != nil {
		return 0, err
	}
	defer in.Destroy()
	outs := []ort.Value{nil}
	if err := o.rec.Run(ctx, []ort.Value{in}, outs); err != nil {
		return 0, err
	}
	defer outs[0].Destroy()
	t := outs[0].(*ort.Tensor[float32])
	shape := t.GetShape() // [1, steps, classes]
	steps, classes := int(shape[1]), int(shape[2])
	d := t.GetData()
	chars, prev := 0, 0
	for s := 0; s < steps; s++ {
		best, bestP := 0, float32(-1)
		for c := 0; c < classes; c++ {
			if v := d[s*classes+c]; v > bestP {
				best, bestP = c, v
			}
		}
		if best != 0 && best != prev {
			chars++
		}
		prev = best
	}
	return chars, nil
}

// syntheticPage draws dark horizontal strokes (text-like lines) on a light
// page, normalized like PaddleOCR's preprocessing ((x/255 - 0.5) / 0.5).
func syntheticPage(size int) []float32 {
	page := make([]float32, 3*size*size)
	for y := 0; y < size; y++ {
		for x := 0; x < size; x++ {
			v := float32(0.9)
			line := (y - size/8) % (size / 5)
			if y >= size/8 && line >= 0 && line < size/16 && x > size/16 && x < size-size/16 {
				if math.Sin(float64(x)*0.8)+math.Cos(float64(y)*1.3) > 0.2 {
					v = -0.8 // ink
				}
			}
			for c := 0; c < 3; c++ {
				page[c*size*size+y*size+x] = v
			}
		}
	}
	return page
}

// cropResize crops box b out of the page and resizes it to h×w by nearest
// neighbour, keeping the CHW layout.
func cropResize(page []float32, size int, b box, h, w int) []float32 {
	out := make([]float32, 3*h*w)
	bh, bw := b.y1-b.y0, b.x1-b.x0
	for c := 0; c < 3; c++ {
		for y := 0; y < h; y++ {
			sy := b.y0 + y*bh/h
			for x := 0; x < w; x++ {
				sx := b.x0 + x*bw/w
				out[c*h*w+y*w+x] = page[c*size*size+sy*size+sx]
			}
		}
	}
	return out
}
