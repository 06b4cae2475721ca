package helmcheck

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ortel-dev/ortel/test/stack"
	"github.com/ortel-dev/ortel/test/testenv"
)

// collectorBinary returns the otelcol-ortel built from the manifest, or
// skips (locally) / fails (CI=true) when it has not been built yet.
func collectorBinary(t *testing.T) string {
	t.Helper()
	root, err := stack.RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(root, stack.BuildScript), "--path").Output()
	if err != nil {
		t.Fatalf("%s --path: %v", stack.BuildScript, err)
	}
	bin := strings.TrimSpace(string(out))
	if _, err := os.Stat(bin); err != nil {
		msg := "the collector built from " + stack.BuildManifest + " is not in the cache (" + bin + "); build it with make collector"
		testenv.Missing(t, "%s", msg)
	}
	return bin
}

// TestGatewayConfigValidates runs `otelcol-ortel validate` on the
// gateway's two config files as the chart renders them, with the
// environment its Deployment sets (Secret values replaced by a stand-in).
// The k8s attributes processor is off: ortel's collector build lacks it.
func TestGatewayConfigValidates(t *testing.T) {
	bin := collectorBinary(t)
	cases := []struct {
		name, extra string
		files       []string
	}{
		{"defaults", "", nil},
		{"all on but k8sattributes", "gateway:\n  k8sAttributes:\n    enabled: false\n", []string{"ci/all-on-values.yaml"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			objs := render(t, tc.extra, tc.files...)
			cm := get(t, objs, "ConfigMap", "rel-ortel-gateway").ConfigMap
			c := get(t, objs, "Deployment", "rel-ortel-gateway").Deployment.Spec.Template.Spec.Containers[0]
			dir := t.TempDir()
			var args []string
			for _, a := range c.Args {
				name, ok := strings.CutPrefix(a, "--config=/conf/")
				if !ok {
					t.Fatalf("gateway arg %q is not a --config under /conf", a)
				}
				if err := os.WriteFile(filepath.Join(dir, name), []byte(cm.Data[name]), 0o644); err != nil {
					t.Fatal(err)
				}
				args = append(args, "--config", filepath.Join(dir, name))
			}
			env := os.Environ()
			for _, e := range c.Env {
				v := e.Value
				if e.ValueFrom != nil {
					v = "stand-in"
				}
				env = append(env, e.Name+"="+v)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, append([]string{"validate"}, args...)...)
			cmd.Env = env
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Run(); err != nil {
				t.Fatalf("otelcol-ortel validate %v: %v\n%s\ngateway.yaml:\n%s", args, err, out.String(), cm.Data["gateway.yaml"])
			}
		})
	}
}
