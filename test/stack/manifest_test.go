package stack

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestManifestBuildsExactlyTheConfigComponents(t *testing.T) {
	root := repoRoot(t)
	c, err := LoadCollector(filepath.Join(root, CollectorConfig))
	if err != nil {
		t.Fatal(err)
	}
	m, err := LoadManifest(filepath.Join(root, BuildManifest))
	if err != nil {
		t.Fatal(err)
	}
	built, err := m.Types()
	if err != nil {
		t.Fatal(err)
	}
	used := c.Types()
	for _, kind := range Kinds {
		if !slices.Equal(built[kind], used[kind]) {
			t.Errorf("%s: the manifest builds %q, collector.yaml uses %q", kind, built[kind], used[kind])
		}
	}
}

func TestManifestPinned(t *testing.T) {
	root := repoRoot(t)
	m, err := LoadManifest(filepath.Join(root, BuildManifest))
	if err != nil {
		t.Fatal(err)
	}
	if m.Dist.Name != "otelcol-ortel" {
		t.Errorf("dist.name = %q; scripts/build-collector.sh expects otelcol-ortel", m.Dist.Name)
	}
	// One collector release for every component; the stable (v1.x) modules
	// of the same release for the providers.
	const release, stable = "v0.155.0", "v1.61.0"
	for kind, mods := range m.Components() {
		for _, mod := range mods {
			if mod.Version() != release {
				t.Errorf("%s %s: version %q, want %s", kind, mod.ModulePath(), mod.Version(), release)
			}
			if mod.Path != "" {
				t.Errorf("%s %s: a local path override does not belong in the shared manifest", kind, mod.ModulePath())
			}
		}
	}
	if len(m.Providers) == 0 {
		t.Error("no confmap providers: the collector could not read --config files or ${env:...}")
	}
	schemes := map[string]bool{}
	for _, p := range m.Providers {
		if p.Version() != stable {
			t.Errorf("provider %s: version %q, want %s", p.ModulePath(), p.Version(), stable)
		}
		schemes[strings.TrimSuffix(path2base(p.ModulePath()), "provider")] = true
	}
	for _, s := range []string{"env", "file"} {
		if !schemes[s] {
			t.Errorf("no %s provider: collector.yaml needs it", s)
		}
	}
	if m.Telemetry.Version() != release {
		t.Errorf("telemetry %q: want the %s release", m.Telemetry.GoMod, release)
	}
}

func path2base(p string) string { return p[strings.LastIndex(p, "/")+1:] }

func TestManifestTypesUnknownModule(t *testing.T) {
	m := &Manifest{Exporters: []Module{{GoMod: "example.com/fancyexporter v1.0.0"}}}
	if _, err := m.Types(); err == nil || !strings.Contains(err.Error(), "example.com/fancyexporter") {
		t.Errorf("Types() error = %v; want one naming the module", err)
	}
}

// The build script caches the binary under the manifest's SHA-256, so a
// changed manifest builds a new collector.
func TestBuildScriptPath(t *testing.T) {
	root := repoRoot(t)
	manifest, err := os.ReadFile(filepath.Join(root, BuildManifest))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(manifest)
	cache := t.TempDir()
	cmd := exec.Command(filepath.Join(root, BuildScript), "--path")
	cmd.Env = append(os.Environ(), "ORTEL_CACHE_DIR="+cache)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s --path: %v", BuildScript, err)
	}
	want := filepath.Join(cache, "otelcol", hex.EncodeToString(sum[:]), "otelcol-ortel")
	if got := strings.TrimSpace(string(out)); got != want {
		t.Errorf("%s --path = %q, want %q", BuildScript, got, want)
	}
	if entries, _ := os.ReadDir(cache); len(entries) != 0 {
		t.Errorf("--path built or created something in the cache: %v", entries)
	}
	bad := exec.Command(filepath.Join(root, BuildScript), "--bogus")
	bad.Env = cmd.Env
	if err := bad.Run(); err == nil {
		t.Error("an unknown argument must fail")
	}
}
