package ortlib

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFindLibraryOrder(t *testing.T) {
	cache := t.TempDir()
	for _, v := range SupportedVersions {
		d := filepath.Join(cache, "onnxruntime", v)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, libNames(v)[0]), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	explicit := filepath.Join(t.TempDir(), "libexplicit.so")
	os.WriteFile(explicit, nil, 0o644)
	tests := []struct {
		name, libPath, version string
		want                   string
		wantErr                string
	}{
		{"default version from the cache", "", "", filepath.Join(cache, "onnxruntime", DefaultVersion, libNames(DefaultVersion)[0]), ""},
		{"version picked by env", "", "1.24.3", filepath.Join(cache, "onnxruntime", "1.24.3", libNames("1.24.3")[0]), ""},
		{"explicit path wins", explicit, "1.24.3", explicit, ""},
		{"explicit path missing is an error", explicit + ".nope", "", "", "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(EnvCacheDir, cache)
			t.Setenv(EnvLibraryPath, tt.libPath)
			t.Setenv(EnvVersion, tt.version)
			got, err := FindLibrary()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("FindLibrary() = %q, %v; want error containing %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("FindLibrary() = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestFindLibraryNotFoundListsPlaces(t *testing.T) {
	cache := t.TempDir()
	t.Setenv(EnvCacheDir, cache)
	t.Setenv(EnvLibraryPath, "")
	t.Setenv(EnvVersion, "9.9.9")
	t.Setenv("LD_LIBRARY_PATH", "")
	_, err := FindLibrary()
	var nf *NotFoundError
	if !errors.As(err, &nf) {
		if err == nil {
			t.Skip("a system copy of ONNX Runtime was found")
		}
		t.Fatalf("err = %v, want *NotFoundError", err)
	}
	msg := err.Error()
	for _, want := range []string{filepath.Join(cache, "onnxruntime", "9.9.9"), FetchHint, EnvLibraryPath} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not mention %q", msg, want)
		}
	}
}

func TestAvailableProviders(t *testing.T) {
	if _, err := Init(); err != nil {
		if ci := os.Getenv("CI"); ci == "true" || ci == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	got, err := AvailableProviders()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("available execution providers: %q", got)
	if len(got) == 0 || got[len(got)-1] != "CPUExecutionProvider" {
		t.Errorf("providers %q: want CPUExecutionProvider last (ONNX Runtime lists it as the fallback)", got)
	}
}
