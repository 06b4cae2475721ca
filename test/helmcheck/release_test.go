package helmcheck

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	yaml3 "gopkg.in/yaml.v3"
	"helm.sh/helm/v3/pkg/chart/loader"

	"github.com/ortel-dev/ortel/test/stack"
)

// ReleaseWorkflow is the workflow that publishes the agent image, relative
// to the repository root.
const ReleaseWorkflow = ".github/workflows/release.yaml"

// workflow is the part of a GitHub Actions workflow the check reads.
type workflow struct {
	On struct {
		Push struct {
			Tags []string `yaml:"tags"`
		} `yaml:"push"`
	} `yaml:"on"`
	Env  map[string]string `yaml:"env"`
	Jobs map[string]struct {
		Container string `yaml:"container"`
		Steps     []struct {
			ID   string            `yaml:"id"`
			Uses string            `yaml:"uses"`
			Run  string            `yaml:"run"`
			With map[string]string `yaml:"with"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

// TestReleaseWorkflowPublishesTheChartImage: the image the release
// workflow publishes on tag v<version> is the one the chart's defaults
// pull (repository ${IMAGE}, tag <version> = the chart's appVersion, for
// amd64 and arm64), the workflow refuses a tag other than v<appVersion>,
// and its binaries are built as the Dockerfile's build stage builds them.
func TestReleaseWorkflowPublishesTheChartImage(t *testing.T) {
	root, err := stack.RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	var wf workflow
	// yaml.v3 (YAML 1.2): "on" is a key, not the boolean YAML 1.1 makes it.
	if err := yaml3.Unmarshal(mustRead(t, filepath.Join(root, ReleaseWorkflow)), &wf); err != nil {
		t.Fatalf("%s: %v", ReleaseWorkflow, err)
	}
	chrt, err := loader.Load(chartDir(t))
	if err != nil {
		t.Fatal(err)
	}
	app := chrt.Metadata.AppVersion

	// What the chart pulls by default.
	objs := render(t, "")
	image := get(t, objs, "DaemonSet", "rel-ortel-agent").DaemonSet.Spec.Template.Spec.Containers[0].Image
	if want := wf.Env["IMAGE"] + ":" + app; image != want {
		t.Errorf("the chart's default agent image is %q; the workflow publishes %q (env IMAGE and the tag v%s)", image, want, app)
	}
	if !slices.Equal(wf.On.Push.Tags, []string{"v*"}) {
		t.Errorf("the workflow runs on tags %q, want [v*]", wf.On.Push.Tags)
	}

	var checked, built, published bool
	for name, job := range wf.Jobs {
		for _, s := range job.Steps {
			switch {
			case strings.Contains(s.Run, `scripts/release-version.sh "$GITHUB_REF_NAME"`):
				checked = true
			case strings.Contains(s.Run, "make release-binaries"):
				built = true
				if job.Container != "golang:1.26.8-bookworm" {
					t.Errorf("job %s builds the binaries in %q, not the Dockerfile's build stage image", name, job.Container)
				}
			case strings.HasPrefix(s.Uses, "docker/metadata-action@"):
				// v0.1.0 -> 0.1.0, and no moving "latest".
				if s.With["images"] != "${{ env.IMAGE }}" || s.With["tags"] != "type=semver,pattern={{version}}" || s.With["flavor"] != "latest=false" {
					t.Errorf("metadata step %+v: want images ${{ env.IMAGE }}, tags type=semver,pattern={{version}}, flavor latest=false", s.With)
				}
			case strings.HasPrefix(s.Uses, "docker/build-push-action@"):
				published = true
				if s.With["platforms"] != "linux/amd64,linux/arm64" || s.With["push"] != "true" || !strings.HasPrefix(s.With["build-args"], "ORTEL_VERSION=") {
					t.Errorf("build-push step %+v: want both platforms pushed with ORTEL_VERSION", s.With)
				}
			}
		}
	}
	if !checked || !built || !published {
		t.Errorf("the workflow checks the tag: %v, builds the binaries: %v, publishes the image: %v; want all three", checked, built, published)
	}
	// The dockerfile's build stage is the binaries job's container.
	if froms, err := stack.DockerfileImages(filepath.Join(root, stack.Dockerfile)); err != nil || froms[0] != "golang:1.26.8-bookworm" {
		t.Errorf("Dockerfile build stage %v, the workflow builds binaries in golang:1.26.8-bookworm", froms)
	}

	// The tag check itself.
	script := filepath.Join(root, "scripts/release-version.sh")
	out, err := exec.Command(script, "v"+app).Output()
	if err != nil || strings.TrimSpace(string(out)) != app {
		t.Errorf("release-version.sh v%s = %q, %v; want %s", app, out, err, app)
	}
	for _, tag := range []string{app, "v" + app + ".1", "v99.0.0", "v"} {
		if out, err := exec.Command(script, tag).CombinedOutput(); err == nil {
			t.Errorf("release-version.sh %s passed (%q): a tag other than v%s must fail", tag, out, app)
		}
	}
}
