package ortapi_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/ortel-dev/ortel/instrument/internal/ortapi"
	"github.com/ortel-dev/ortel/internal/onnxgen"
	"github.com/ortel-dev/ortel/test/testenv"
)

// TestTableIndexMatchesBindingHeader counts the entries of the OrtApi
// struct in the C API 24 header the Go binding ships: run-level profiling
// sits right after them, so a miscount would call the wrong function.
func TestTableIndexMatchesBindingHeader(t *testing.T) {
	src := bindingHeader(t)
	n := countOrtAPIEntries(t, src)
	if n != ortapi.API24Entries {
		t.Fatalf("OrtApi of C API 24 has %d entries, package assumes %d", n, ortapi.API24Entries)
	}
}

var (
	blockComment = regexp.MustCompile(`(?s)/\*.*?\*/`)
	lineComment  = regexp.MustCompile(`//[^\n]*`)
	member       = regexp.MustCompile(`ORT_API2_STATUS\(|ORT_API_T\(|ORT_CLASS_RELEASE2?\(|\(ORT_API_CALL\s*\*`)
)

// bindingHeader reads the C API header the Go binding ships. The package's
// table indices are counted for C API 24: a binding on another version
// fails here (recount the indices for it) instead of skipping, since a
// skipped count would let a wrong index call another function.
func bindingHeader(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/yalue/onnxruntime_go").Output()
	if err != nil {
		t.Fatalf("cannot locate the binding's module folder: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "onnxruntime_c_api.h"))
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	if !strings.Contains(src, "#define ORT_API_VERSION 24") {
		t.Fatal("the binding's header is not C API 24: recount the OrtApi indices in package ortapi for it")
	}
	return src
}

func countOrtAPIEntries(t *testing.T, src string) int {
	t.Helper()
	src = lineComment.ReplaceAllString(blockComment.ReplaceAllString(src, ""), "")
	i := strings.Index(src, "struct OrtApi {")
	if i < 0 {
		t.Fatal("no struct OrtApi in header")
	}
	j := strings.Index(src[i:], "\n};")
	return len(member.FindAllString(src[i:i+j], -1))
}

func TestRunProfilingWritesOneFilePerRun(t *testing.T) {
	testenv.RequireORT(t)
	err := ortapi.RunProfiling()
	if errors.Is(err, ortapi.ErrUnsupported) {
		t.Skipf("library %s: %v", ortapi.LibraryVersion(), err)
	}
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "chain.onnx")
	if err := onnxgen.MatMulAddChain(3, 8).WriteFile(path); err != nil {
		t.Fatal(err)
	}
	sess, err := ort.NewDynamicAdvancedSession(path, []string{"x"}, []string{"y"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Destroy()
	in, _ := ort.NewTensor(ort.NewShape(1, 8), make([]float32, 8))
	defer in.Destroy()
	ro, err := ort.NewRunOptions()
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Destroy()
	prefix := filepath.Join(dir, "p1")
	if err := ortapi.EnableRunProfiling(ro, prefix); err != nil {
		t.Fatal(err)
	}
	if err := sess.RunWithOptions([]ort.Value{in}, []ort.Value{nil}, ro); err != nil {
		t.Fatal(err)
	}
	if err := ortapi.DisableRunProfiling(ro); err != nil {
		t.Fatal(err)
	}
	if err := sess.RunWithOptions([]ort.Value{in}, []ort.Value{nil}, ro); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		t.Logf("%s", e.Name())
	}
	files, _ := filepath.Glob(prefix + "*.json")
	if len(files) != 1 {
		t.Fatalf("want 1 profile for the one profiled run, got %v", files)
	}
	b, _ := os.ReadFile(files[0])
	t.Logf("%s", b)
}

// BenchmarkRunProfiled measures what run-level profiling costs ONNX Runtime
// itself, without ortel, on Silero VAD, PaddleOCR det and a 3-node model
// (one intra-op thread): a
// run with profiling switched on (writing its JSON file) against a plain
// run, interleaved in blocks (of 2 runs for det, 20 for the others).
func BenchmarkRunProfiled(b *testing.B) {
	b.Run("vad", func(b *testing.B) {
		testenv.RequireORT(b)
		in, _ := ort.NewTensor(ort.NewShape(1, 512), make([]float32, 512))
		st, _ := ort.NewTensor(ort.NewShape(2, 1, 128), make([]float32, 256))
		sr, _ := ort.NewScalar(int64(16000))
		o1, _ := ort.NewEmptyTensor[float32](ort.NewShape(1, 1))
		o2, _ := ort.NewEmptyTensor[float32](ort.NewShape(2, 1, 128))
		benchRunProfiled(b, 20, testenv.Model(b, "silero_vad_v5.onnx"), []string{"input", "state", "sr"}, []string{"output", "stateN"},
			[]ort.Value{in, st, sr}, []ort.Value{o1, o2})
	})
	b.Run("det", func(b *testing.B) {
		testenv.RequireORT(b)
		in, _ := ort.NewTensor(ort.NewShape(1, 3, 640, 640), make([]float32, 3*640*640))
		out, _ := ort.NewEmptyTensor[float32](ort.NewShape(1, 1, 640, 640))
		benchRunProfiled(b, 2, testenv.Model(b, "ch_PP-OCRv4_det_infer.onnx"), []string{"x"}, []string{"sigmoid_0.tmp_0"},
			[]ort.Value{in}, []ort.Value{out})
	})
	b.Run("chain3", func(b *testing.B) {
		testenv.RequireORT(b)
		path := filepath.Join(b.TempDir(), "chain.onnx")
		if err := onnxgen.MatMulAddChain(3, 8).WriteFile(path); err != nil {
			b.Fatal(err)
		}
		in, _ := ort.NewTensor(ort.NewShape(1, 8), make([]float32, 8))
		out, _ := ort.NewEmptyTensor[float32](ort.NewShape(1, 8))
		benchRunProfiled(b, 20, path, []string{"x"}, []string{"y"}, []ort.Value{in}, []ort.Value{out})
	})
}

func benchRunProfiled(b *testing.B, block int, model string, inNames, outNames []string, ins, outs []ort.Value) {
	if err := ortapi.RunProfiling(); err != nil {
		b.Skip(err)
	}
	so, _ := ort.NewSessionOptions()
	defer so.Destroy()
	so.SetIntraOpNumThreads(1)
	so.SetInterOpNumThreads(1)
	sess, err := ort.NewDynamicAdvancedSession(model, inNames, outNames, so)
	if err != nil {
		b.Fatal(err)
	}
	defer sess.Destroy()
	ro, _ := ort.NewRunOptions()
	defer ro.Destroy()
	dir := b.TempDir()
	var plain, profiled []float64
	n := 0
	for r := 0; r < max(b.N, 5); r++ {
		t := time.Now()
		for j := 0; j < block; j++ {
			sess.RunWithOptions(ins, outs, nil)
		}
		plain = append(plain, float64(time.Since(t))/float64(block))
		t = time.Now()
		for j := 0; j < block; j++ {
			n++
			ortapi.EnableRunProfiling(ro, filepath.Join(dir, fmt.Sprint("r", n)))
			sess.RunWithOptions(ins, outs, ro)
			ortapi.DisableRunProfiling(ro)
		}
		profiled = append(profiled, float64(time.Since(t))/float64(block))
	}
	slices.Sort(plain)
	slices.Sort(profiled)
	p, q := plain[len(plain)/2], profiled[len(profiled)/2]
	b.ReportMetric(p/1e3, "plain-us")
	b.ReportMetric(q/1e3, "profiled-us")
	b.ReportMetric(q/p, "profiled/plain")
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) > 0 {
		fi, _ := os.Stat(files[0])
		b.ReportMetric(float64(fi.Size())/1024, "profile-KB")
	}
}
