package ortapi_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/ortel-dev/ortel/instrument/internal/ortapi"
	"github.com/ortel-dev/ortel/internal/onnxgen"
	"github.com/ortel-dev/ortel/internal/testenv"
)

// TestTableIndexMatchesBindingHeader counts the entries of the OrtApi
// struct in the C API 24 header the Go binding ships: run-level profiling
// sits right after them, so a miscount would call the wrong function.
func TestTableIndexMatchesBindingHeader(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/yalue/onnxruntime_go").Output()
	if err != nil {
		t.Skipf("cannot locate the binding's module folder: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "onnxruntime_c_api.h"))
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	if !strings.Contains(src, "#define ORT_API_VERSION 24") {
		t.Skip("the binding's header is not C API 24; recount the table for it")
	}
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
