package instrument

import (
	"bytes"
	"flag"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var updateAPI = flag.Bool("update", false, "rewrite testdata/api.golden")

// publicPackages are instrument and its subpackages users import, by folder
// relative to this one.
var publicPackages = []string{".", "ortlib", "profile", "spanbatch", "views"}

// TestPublicAPI lists every exported identifier of instrument and its public
// subpackages (constants, variables, functions, types with their exported
// fields and methods, each with its signature) and compares the list with
// testdata/api.golden, so that a change to what users can reach is seen in
// review: an export that exists only for ortel's own internal/ or cmd/ code
// belongs unexported or under an internal/ folder. After a deliberate
// change: go test ./instrument -run TestPublicAPI -update. Planted: an
// exported func ImportProfileDebug in operators.go failed it, naming the
// line that appeared.
func TestPublicAPI(t *testing.T) {
	var lines []string
	for _, dir := range publicPackages {
		lines = append(lines, packageAPI(t, dir)...)
	}
	got := strings.Join(lines, "\n") + "\n"
	golden := filepath.Join("testdata", "api.golden")
	if *updateAPI {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("read %s (create it with -update): %v", golden, err)
	}
	if got == string(want) {
		return
	}
	wantLines := strings.Split(strings.TrimSuffix(string(want), "\n"), "\n")
	for _, l := range lines {
		if !slices.Contains(wantLines, l) {
			t.Errorf("new in the public API: %s", l)
		}
	}
	for _, l := range wantLines {
		if !slices.Contains(lines, l) {
			t.Errorf("gone from the public API: %s", l)
		}
	}
	t.Errorf("the public API differs from %s; if the change is meant, run with -update and review the diff", golden)
}

// packageAPI describes the exported identifiers of the package in dir (all
// its non-test files, whatever their build constraints), one sorted line
// each, prefixed with the package's path below the module.
func packageAPI(t *testing.T, dir string) []string {
	t.Helper()
	fset := token.NewFileSet()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	path := "instrument"
	if dir != "." {
		path += "/" + filepath.ToSlash(dir)
	}
	p, err := doc.NewFromFiles(fset, files, "github.com/ortel-dev/ortel/"+path)
	if err != nil {
		t.Fatal(err)
	}
	src := func(n any) string {
		var b bytes.Buffer
		if err := printer.Fprint(&b, fset, n); err != nil {
			t.Fatal(err)
		}
		return strings.Join(strings.Fields(b.String()), " ")
	}
	var out []string
	add := func(s string) { out = append(out, path+": "+s) }
	values := func(kind string, vs []*doc.Value) {
		for _, v := range vs {
			for _, spec := range v.Decl.Specs {
				vs := spec.(*ast.ValueSpec)
				for _, n := range vs.Names {
					if !n.IsExported() {
						continue
					}
					if vs.Type != nil {
						add(kind + " " + n.Name + " " + src(vs.Type))
					} else {
						add(kind + " " + n.Name)
					}
				}
			}
		}
	}
	funcs := func(fs []*doc.Func) {
		for _, f := range fs {
			d := *f.Decl
			d.Doc, d.Body = nil, nil
			add(src(&d))
		}
	}
	values("const", p.Consts)
	values("var", p.Vars)
	funcs(p.Funcs)
	for _, typ := range p.Types {
		values("const", typ.Consts)
		values("var", typ.Vars)
		funcs(typ.Funcs)
		funcs(typ.Methods)
		ts := typ.Decl.Specs[0].(*ast.TypeSpec)
		switch u := ts.Type.(type) {
		case *ast.StructType:
			add("type " + typ.Name + " struct")
			for _, f := range u.Fields.List {
				for _, n := range f.Names {
					if n.IsExported() {
						add("field " + typ.Name + "." + n.Name + " " + src(f.Type))
					}
				}
				if len(f.Names) == 0 {
					add("embedded " + typ.Name + " " + src(f.Type))
				}
			}
		case *ast.InterfaceType:
			add("type " + typ.Name + " interface")
			for _, m := range u.Methods.List {
				for _, n := range m.Names {
					add("method " + typ.Name + "." + n.Name + src(m.Type)[len("func"):])
				}
				if len(m.Names) == 0 {
					add("embedded " + typ.Name + " " + src(m.Type))
				}
			}
		default:
			eq := " "
			if ts.Assign.IsValid() {
				eq = " = "
			}
			add("type " + typ.Name + eq + src(ts.Type))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
