package telemetry

import (
	"os"
	"runtime"
	"testing"

	"go.opentelemetry.io/otel/attribute"
)

func TestNewResource(t *testing.T) {
	r := Resolved{ResourceAttrs: []attribute.KeyValue{
		attribute.String("service.name", "svc"),
		attribute.String("host.name", "configured-host"), // configuration beats detection
	}}
	res, warnings := newResource(t.Context(), r)
	if len(warnings) != 0 {
		t.Errorf("warnings: %q", warnings)
	}
	got := map[string]attribute.Value{}
	for _, kv := range res.Attributes() {
		got[string(kv.Key)] = kv.Value
	}
	if v := got["host.name"].AsString(); v != "configured-host" {
		t.Errorf("host.name = %q, want the configured one", v)
	}
	if v := got["service.name"].AsString(); v != "svc" {
		t.Errorf("service.name = %q", v)
	}
	if v := got["process.pid"].AsInt64(); v != int64(os.Getpid()) {
		t.Errorf("process.pid = %d", v)
	}
	if v := got["os.type"].AsString(); v != runtime.GOOS {
		t.Errorf("os.type = %q", v)
	}
	for _, k := range []string{"host.arch", "os.description", "process.executable.name", "process.runtime.name", "process.runtime.version", "telemetry.sdk.version"} {
		if _, ok := got[k]; !ok && !(k == "host.arch" && hostArch() == nil) {
			t.Errorf("resource lacks %s", k)
		}
	}
	if res.SchemaURL() == "" {
		t.Error("resource has no schema URL")
	}
}

func TestHostArch(t *testing.T) {
	got := hostArch()
	switch runtime.GOARCH {
	case "amd64", "arm64":
		if len(got) != 1 || got[0].Value.AsString() != runtime.GOARCH {
			t.Errorf("hostArch() = %v on %s", got, runtime.GOARCH)
		}
	}
}
