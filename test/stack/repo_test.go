package stack

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestRepoRoot(t *testing.T) {
	tmp := t.TempDir()
	repo := filepath.Join(tmp, "checkout")
	deep := filepath.Join(repo, "internal", "x", "y")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(tmp, "other")
	if err := os.MkdirAll(filepath.Join(other, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(path, text string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(repo, "go.mod"), "module github.com/ortel-dev/ortel\n\ngo 1.26\n")
	write(filepath.Join(other, "go.mod"), "module example.com/ortel-dev/ortel2\n")

	tests := []struct {
		name, dir, want string
		wantErr         error
	}{
		{"root itself", repo, repo, nil},
		{"nested folder", deep, repo, nil},
		{"another module", filepath.Join(other, "sub"), "", ErrNoRepo},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := RepoRoot(tt.dir)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("RepoRoot(%q) error = %v, want %v", tt.dir, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("RepoRoot(%q) = %q, %v; want %q", tt.dir, got, err, tt.want)
			}
		})
	}
}

func TestDeclaresModule(t *testing.T) {
	tests := []struct {
		gomod string
		want  bool
	}{
		{"module github.com/ortel-dev/ortel\n", true},
		{"// c\nmodule \"github.com/ortel-dev/ortel\"\n", true},
		{"module github.com/ortel-dev/ortel/sub\n", false},
		{"require github.com/ortel-dev/ortel v1.0.0\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.gomod, func(t *testing.T) {
			if got := declaresModule(tt.gomod); got != tt.want {
				t.Errorf("declaresModule(%q) = %v, want %v", tt.gomod, got, tt.want)
			}
		})
	}
}

// repoRoot returns the checkout these tests run in.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	return root
}
