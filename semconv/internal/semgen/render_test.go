package semgen

import (
	"bytes"
	"flag"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"testing/fstest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// TestGolden renders the registry under testdata/registry and compares
// every output with testdata/golden. Run `go test -update` to accept a
// deliberate change.
func TestGolden(t *testing.T) {
	files, err := Generate(os.DirFS("testdata"), "registry", Output{GoDir: "go", DocsFile: "docs/metrics.md", ReceiversDir: "receivers"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			golden := filepath.Join("testdata", "golden", strings.ReplaceAll(name, "/", "_")+".golden")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, files[name], 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if !bytes.Equal(files[name], want) {
				t.Errorf("%s differs from %s; run go test -update if the change is deliberate\n%s", name, golden, files[name])
			}
		})
	}
}

// TestGeneratedHeader checks that every output starts with the
// DO-NOT-EDIT line that Go tooling recognises.
func TestGeneratedHeader(t *testing.T) {
	files, err := Generate(os.DirFS("testdata"), "registry", Output{GoDir: "go", DocsFile: "docs/metrics.md", ReceiversDir: "receivers"})
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		first, _, _ := strings.Cut(string(data), "\n")
		want := "// " + Header
		if path.Ext(name) == ".md" {
			want = "<!-- " + Header + " -->"
		}
		if first != want {
			t.Errorf("%s starts with %q, want %q", name, first, want)
		}
	}
}

// TestDeterministic checks that the output depends only on the registry's
// content, not on how the groups are spread over files or ordered.
func TestDeterministic(t *testing.T) {
	out := Output{GoDir: "go", DocsFile: "docs/metrics.md"}
	a, err := Generate(testFS(map[string]string{
		"attrs.yaml":   baseAttrs,
		"metrics.yaml": metricsFile(metricDef{}, metricDef{name: "ortel.test.count", instrument: "counter", unit: "{x}", valueType: "int"}),
	}), "registry", out)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Generate(testFS(map[string]string{
		"z/attrs.yaml": baseAttrs,
		"a/one.yaml":   metricsFile(metricDef{name: "ortel.test.count", instrument: "counter", unit: "{x}", valueType: "int"}),
		"b/two.yaml":   metricsFile(metricDef{}),
	}), "registry", out)
	if err != nil {
		t.Fatal(err)
	}
	for name := range a {
		if !bytes.Equal(a[name], b[name]) {
			t.Errorf("%s depends on the file layout of the registry", name)
		}
	}
}

func TestWriteKeepsUnchangedFiles(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sub", "f.go")
	if err := Write(map[string][]byte{p: []byte("a")}); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(map[string][]byte{p: []byte("a")}); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(p)
	if !after.ModTime().Equal(before.ModTime()) {
		t.Error("unchanged file was rewritten")
	}
	if err := Write(map[string][]byte{p: []byte("b")}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p); string(got) != "b" {
		t.Errorf("content = %q, want b", got)
	}
}

// TestGenerateStopsOnLoadError checks that a broken registry never reaches
// the renderers.
func TestGenerateStopsOnLoadError(t *testing.T) {
	_, err := Generate(fstest.MapFS{"registry/x.yaml": &fstest.MapFile{Data: []byte("groups: [")}}, "registry", Output{})
	if err == nil {
		t.Fatal("Generate accepted broken YAML")
	}
}

// FuzzGenerate feeds arbitrary YAML as one file of a registry beside valid
// attributes and checks that Generate, from parsing to rendering every
// output (receiver tables included), returns files or an error and never
// panics.
func FuzzGenerate(f *testing.F) {
	for _, p := range []string{"testdata/registry/ortel/metrics.yaml", "testdata/registry/upstream/hw.yaml"} {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(metricsFile(metricDef{ortel: "        source: [receivers/cpu, receivers/nvml]\n        default_enabled: true\n" +
		"        source_attributes:\n          receivers/nvml: [ortel.test.name]\n"})))
	f.Add([]byte("groups:\n  - id: points.receivers.cpu\n    type: attribute_group\n    brief: B.\n    annotations:\n      ortel:\n        source: receivers/cpu\n    attributes:\n      - ref: ortel.test.name\n        requirement_level: required\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fsys := testFS(map[string]string{"attrs.yaml": baseAttrs, "fuzz.yaml": string(data)})
		files, err := Generate(fsys, "registry", Output{GoDir: "go", DocsFile: "docs/metrics.md", ReceiversDir: "receivers"})
		if err == nil && len(files) < 4 {
			t.Fatalf("no error, but only %d files", len(files))
		}
	})
}
