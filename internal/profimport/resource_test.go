package profimport

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"

	"github.com/ortel-dev/ortel/test/testenv"
)

// TestResourcePrecedence: flags over environment over profile, and
// unknown_service when nothing names the service; the profile's pid, never
// this process's.
func TestResourcePrecedence(t *testing.T) {
	prof := filepath.Join(t.TempDir(), "onnxruntime_profile__2026-11-22_01-05-14.json")
	if err := os.WriteFile(prof, testenv.Gunzip(t, "../../instrument/profile/testdata/vad_ort1.24.3.json.gz"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, envAttrs, envService string
		cfg                        ResourceConfig
		want                       map[string]string
	}{
		{"profile only", "", "", ResourceConfig{}, map[string]string{"service.name": UnknownService, "process.pid": "17877"}},
		{"resource attributes", "service.name=a,team=x", "", ResourceConfig{}, map[string]string{"service.name": "a", "team": "x"}},
		{"service name variable over attributes", "service.name=a", "b", ResourceConfig{}, map[string]string{"service.name": "b"}},
		{"environment over profile pid", "process.pid=42", "", ResourceConfig{}, map[string]string{"process.pid": "42"}},
		{"flags over environment", "service.name=a,team=x", "b",
			ResourceConfig{ServiceName: "c", Attrs: []attribute.KeyValue{attribute.String("team", "y")}}, map[string]string{"service.name": "c", "team": "y"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("OTEL_RESOURCE_ATTRIBUTES", tt.envAttrs)
			t.Setenv("OTEL_SERVICE_NAME", tt.envService)
			tt.cfg.Profiles = []string{prof}
			res, _, err := Resource(context.Background(), tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, kv := range res.Attributes() {
				got[string(kv.Key)] = kv.Value.String()
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q (all: %v)", k, got[k], v, got)
				}
			}
			if got[AttrProfileFile] != filepath.Base(prof) || !strings.HasPrefix(got[AttrProfileStart], "2026-11-22T01:05:14") {
				t.Errorf("profile file/start: %v", got)
			}
			if _, ok := got["host.name"]; ok {
				t.Errorf("host.name set: the profile does not say the host")
			}
		})
	}
}

// FuzzParseResourceAttr: a parsed attribute has a non-empty key and gives
// back the value after the first '='; an error is ErrBadResourceAttr.
func FuzzParseResourceAttr(f *testing.F) {
	for _, s := range []string{"a=b", "k=", "=v", "noequals", "a=b=c", " k =v"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		kv, err := ParseResourceAttr(s)
		if err != nil {
			if !errors.Is(err, ErrBadResourceAttr) {
				t.Fatalf("%q: %v", s, err)
			}
			return
		}
		_, v, _ := strings.Cut(s, "=")
		if kv.Key == "" || kv.Value.AsString() != v {
			t.Fatalf("%q: %v", s, kv)
		}
	})
}
