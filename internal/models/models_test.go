package models

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("ORTEL_CACHE_DIR", cache)
	os.MkdirAll(filepath.Join(cache, "models"), 0o755)
	det := filepath.Join(cache, "models", "ch_PP-OCRv4_det_infer.onnx")
	if err := os.WriteFile(det, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(t.TempDir(), "m.onnx")
	os.WriteFile(plain, []byte("x"), 0o644)

	tests := []struct {
		arg, wantPath, wantKnown, wantErr string
	}{
		{arg: "paddleocr-det", wantPath: det, wantKnown: "paddleocr-det"},
		{arg: det, wantPath: det, wantKnown: "paddleocr-det"},
		{arg: plain, wantPath: plain},
		{arg: "paddleocr-rec", wantErr: "not fetched yet"},
		{arg: "nope.onnx", wantErr: "not a known model name"},
		{arg: "", wantErr: "no model given"},
		{arg: cache, wantErr: "is a folder"},
	}
	for _, tt := range tests {
		t.Run(tt.arg, func(t *testing.T) {
			p, k, err := Resolve(tt.arg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Resolve(%q) error = %v, want it to contain %q", tt.arg, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p != tt.wantPath {
				t.Errorf("path = %q, want %q", p, tt.wantPath)
			}
			got := ""
			if k != nil {
				got = k.Name
			}
			if got != tt.wantKnown {
				t.Errorf("known = %q, want %q", got, tt.wantKnown)
			}
		})
	}
}
