package layers

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/ortel-dev/ortel/"

// imports lists, per package of the module, the module's packages and
// the OpenTelemetry SDK packages its non-test files import.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	// go test puts its own toolchain first on the PATH of the tests.
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the packages: %v", err)
	}
	cmd := exec.Command(goBin, "list", "-e", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "github.com/ortel-dev/ortel/...")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	got := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg := strings.TrimPrefix(f[0], module)
		got[pkg] = nil
		for _, imp := range f[1:] {
			switch {
			case strings.HasPrefix(imp, module):
				got[pkg] = append(got[pkg], strings.TrimPrefix(imp, module))
			case strings.HasPrefix(imp, "go.opentelemetry.io/otel/sdk"):
				got[pkg] = append(got[pkg], imp)
			}
		}
	}
	return got
}

// under reports whether pkg is root or below it.
func under(pkg, root string) bool { return pkg == root || strings.HasPrefix(pkg, root+"/") }

// testSupport reports whether pkg exists for tests only: under test/, or
// a helper package named ...test (receivers/internal/procfs/procfstest).
func testSupport(pkg string) bool {
	return under(pkg, "test") || strings.HasSuffix(pkg, "test") || strings.HasSuffix(pkg, "/hostbench")
}

// rule is one direction imports must not take.
type rule struct {
	name string
	// applies selects the importing packages.
	applies func(pkg string) bool
	// forbidden says whether the import imp breaks the rule.
	forbidden func(imp string) bool
}

func isSDK(imp string) bool { return strings.HasPrefix(imp, "go.opentelemetry.io/otel/sdk") }

var rules = []rule{
	{"semconv imports none of ortel's other packages",
		func(p string) bool { return under(p, "semconv") },
		func(i string) bool { return !isSDK(i) && !under(i, "semconv") }},
	{"instrument uses the OpenTelemetry API only and imports only semconv (spanbatch and views are its SDK-side companions)",
		func(p string) bool {
			return under(p, "instrument") && !under(p, "instrument/spanbatch") && !under(p, "instrument/views")
		},
		func(i string) bool { return isSDK(i) || !(under(i, "instrument") || under(i, "semconv")) }},
	{"receivers use the OpenTelemetry API only and import only semconv, never instrument",
		func(p string) bool { return under(p, "receivers") && !testSupport(p) },
		func(i string) bool { return isSDK(i) || !(under(i, "receivers") || under(i, "semconv")) }},
	{"internal imports neither cmd, examples nor test support",
		func(p string) bool { return under(p, "internal") },
		func(i string) bool { return under(i, "cmd") || under(i, "examples") || testSupport(i) }},
	{"cmd imports neither examples nor test support",
		func(p string) bool { return under(p, "cmd") },
		func(i string) bool { return under(i, "examples") || testSupport(i) }},
	{"examples import public packages only (a user copies one out of the repository and it builds)",
		func(p string) bool { return under(p, "examples") },
		func(i string) bool { return strings.Contains("/"+i+"/", "/internal/") || testSupport(i) }},
}

// TestImportsFlowOneWay checks every package's non-test imports against
// the layers. Planted: instrument importing internal/units, and
// internal/report importing test/otlptest: each failed naming its rule.
func TestImportsFlowOneWay(t *testing.T) {
	got := imports(t)
	if len(got) < 40 {
		t.Fatalf("go list found %d packages: not the module", len(got))
	}
	for _, r := range rules {
		seen := 0
		for pkg, imps := range got {
			if !r.applies(pkg) {
				continue
			}
			seen++
			for _, imp := range imps {
				if r.forbidden(imp) {
					t.Errorf("%s imports %s: %s", pkg, imp, r.name)
				}
			}
		}
		if seen == 0 {
			t.Errorf("no package is subject to %q: the layout changed; update the rule", r.name)
		}
	}
}
