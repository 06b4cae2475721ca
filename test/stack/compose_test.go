package stack

import (
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/ortel-dev/ortel/test/testenv"
)

// documentedPorts are the host ports the README's "Local stack" section
// documents, with the service and container port behind each. The compose
// file must publish exactly these, on 127.0.0.1.
var documentedPorts = map[int]struct {
	service   string
	container int
}{
	4317:  {"otel-collector", 4317}, // OTLP gRPC
	4318:  {"otel-collector", 4318}, // OTLP HTTP
	8889:  {"otel-collector", 8889}, // the collector's Prometheus exporter
	16686: {"jaeger", 16686},        // Jaeger UI
	9090:  {"prometheus", 9090},     // Prometheus UI
	3000:  {"grafana", 3000},        // Grafana
}

func loadRepoCompose(t *testing.T) (*Compose, string) {
	t.Helper()
	root := repoRoot(t)
	c, err := LoadCompose(filepath.Join(root, ComposeFile))
	if err != nil {
		t.Fatal(err)
	}
	return c, root
}

func TestComposeImagesPinned(t *testing.T) {
	c, root := loadRepoCompose(t)
	for _, name := range sortedKeys(setOfKeys(c.Services)) {
		s := c.Services[name]
		t.Run(name, func(t *testing.T) {
			switch {
			case s.Image != "":
				if err := ParseImage(s.Image).Pinned(); err != nil {
					t.Errorf("image %q is not pinned: %v", s.Image, err)
				}
			case s.HasBuild():
				// Built locally: the Dockerfile's base images must be pinned.
				for _, from := range dockerfileImages(t, filepath.Join(root, "Dockerfile")) {
					if err := ParseImage(from).Pinned(); err != nil {
						t.Errorf("Dockerfile base image %q is not pinned: %v", from, err)
					}
				}
			default:
				t.Error("service has neither image nor build")
			}
		})
	}
}

// dockerfileImages returns the base images of a Dockerfile (DockerfileImages).
func dockerfileImages(t *testing.T, path string) []string {
	t.Helper()
	images, err := DockerfileImages(path)
	if err != nil {
		t.Fatalf("the compose file builds an image but: %v", err)
	}
	return images
}

func TestComposeMountsExist(t *testing.T) {
	c, root := loadRepoCompose(t)
	n := 0
	for _, name := range sortedKeys(setOfKeys(c.Services)) {
		mounts, err := c.Services[name].Mounts()
		if err != nil {
			t.Fatalf("service %s: %v", name, err)
		}
		for _, m := range mounts {
			if !m.Bind {
				continue
			}
			n++
			t.Run(name+" "+m.Source, func(t *testing.T) {
				host := m.HostPath(root)
				if _, err := os.Stat(host); err != nil {
					t.Errorf("mounted %s does not exist: %v", m.Source, err)
				}
				if rel, err := filepath.Rel(root, host); err != nil || strings.HasPrefix(rel, "..") {
					t.Errorf("mount %s reaches outside the repository", m.Source)
				}
				if !m.ReadOnly {
					t.Errorf("mount %s:%s should be read-only (:ro)", m.Source, m.Target)
				}
			})
		}
	}
	if n == 0 {
		t.Fatal("no bind mounts found: otelcol-config/ must be mounted")
	}
}

func TestComposePorts(t *testing.T) {
	c, _ := loadRepoCompose(t)
	seen := map[int]bool{}
	for _, name := range sortedKeys(setOfKeys(c.Services)) {
		ports, err := c.Services[name].PublishedPorts()
		if err != nil {
			t.Fatalf("service %s: %v", name, err)
		}
		for _, p := range ports {
			doc, ok := documentedPorts[p.HostPort]
			switch {
			case !ok:
				t.Errorf("service %s publishes host port %d, which the README does not document", name, p.HostPort)
			case doc.service != name || doc.container != p.ContainerPort:
				t.Errorf("host port %d goes to %s:%d, documented as %s:%d", p.HostPort, name, p.ContainerPort, doc.service, doc.container)
			}
			if p.HostIP != "127.0.0.1" {
				t.Errorf("service %s publishes port %d on %q; local listeners bind to 127.0.0.1", name, p.HostPort, p.HostIP)
			}
			seen[p.HostPort] = true
		}
	}
	for port, doc := range documentedPorts {
		if !seen[port] {
			t.Errorf("documented port %d (%s) is not published", port, doc.service)
		}
	}
}

// TestReadmeDocumentsPorts checks the README's "Local stack" section names
// every published port. It skips locally while the section is missing and
// fails under CI=true.
func TestReadmeDocumentsPorts(t *testing.T) {
	root := repoRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	section := ""
	if err == nil {
		section = markdownSection(string(b), "Local stack")
	}
	if section == "" {
		msg := "README.md has no \"Local stack\" section documenting the compose ports"
		testenv.Missing(t, "%s", msg)
	}
	for port, doc := range documentedPorts {
		if !strings.Contains(section, strconv.Itoa(port)) {
			t.Errorf("README \"Local stack\" section does not mention port %d (%s)", port, doc.service)
		}
	}
}

// markdownSection returns the text under the first heading that contains
// title, up to the next heading of the same or a higher level.
func markdownSection(md, title string) string {
	lines := strings.Split(md, "\n")
	level := 0
	var out []string
	for _, l := range lines {
		h := len(l) - len(strings.TrimLeft(l, "#"))
		isHeading := h > 0 && h < len(l) && l[h] == ' '
		switch {
		case level == 0 && isHeading && strings.Contains(strings.ToLower(l), strings.ToLower(title)):
			level = h
		case level > 0 && isHeading && h <= level:
			return strings.Join(out, "\n")
		case level > 0:
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func TestMarkdownSection(t *testing.T) {
	md := "# ortel\nintro\n## Local stack\nports 4317\n### Ports\n9090\n## Other\n3000\n"
	got := markdownSection(md, "local stack")
	if !strings.Contains(got, "4317") || !strings.Contains(got, "9090") || strings.Contains(got, "3000") {
		t.Errorf("markdownSection = %q", got)
	}
	if markdownSection(md, "missing") != "" {
		t.Error("a missing section must give an empty text")
	}
}

// containerToHost maps a path inside a service's container back to the
// repository file mounted there, or "" when no bind mount covers it.
func containerToHost(t *testing.T, s Service, root, p string) string {
	t.Helper()
	mounts, err := s.Mounts()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mounts {
		if !m.Bind {
			continue
		}
		if p == m.Target {
			return m.HostPath(root)
		}
		if rel, ok := strings.CutPrefix(p, strings.TrimSuffix(m.Target, "/")+"/"); ok {
			return filepath.Join(m.HostPath(root), filepath.FromSlash(rel))
		}
	}
	return ""
}

func TestComposeCollector(t *testing.T) {
	c, root := loadRepoCompose(t)
	s, ok := c.Services["otel-collector"]
	if !ok {
		t.Fatal("no otel-collector service")
	}
	ref := ParseImage(s.Image)
	if ref.Repository != "otel/opentelemetry-collector-contrib" {
		t.Errorf("collector image %q: want the official otel/opentelemetry-collector-contrib", s.Image)
	}
	man, err := LoadManifest(filepath.Join(root, BuildManifest))
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimPrefix(man.Receivers[0].Version(), "v"); ref.Tag != want {
		t.Errorf("collector image tag %q differs from the build manifest's release %q: the two would run different component versions", ref.Tag, want)
	}

	args, err := s.Args()
	if err != nil {
		t.Fatal(err)
	}
	var configs []string
	for i, a := range args {
		switch {
		case strings.HasPrefix(a, "--config="):
			configs = append(configs, strings.TrimPrefix(a, "--config="))
		case a == "--config" && i+1 < len(args):
			configs = append(configs, args[i+1])
		}
	}
	if len(configs) != 1 {
		t.Fatalf("collector command %q: want exactly one --config", args)
	}
	host := containerToHost(t, s, root, strings.TrimPrefix(configs[0], "file:"))
	if want := filepath.Join(root, CollectorConfig); host != want {
		t.Errorf("collector runs --config %s, which is %q on the host; want %s", configs[0], host, CollectorConfig)
	}

	env, err := s.Env()
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(filepath.Join(root, CollectorConfig))
	if err != nil {
		t.Fatal(err)
	}
	for k := range env {
		if strings.HasPrefix(k, "OTELCOL_") && !strings.Contains(string(text), "${env:"+k+":-") {
			t.Errorf("compose sets %s, which collector.yaml does not read", k)
		}
	}
	// Inside the container the listeners must be reachable from the other
	// containers and the published ports.
	for _, k := range []string{"OTELCOL_GRPC_ENDPOINT", "OTELCOL_HTTP_ENDPOINT", "OTELCOL_PROMETHEUS_ENDPOINT", "OTELCOL_TELEMETRY_HOST"} {
		if !strings.HasPrefix(env[k], "0.0.0.0") {
			t.Errorf("compose %s = %q; want 0.0.0.0 inside the container", k, env[k])
		}
	}
	if env["OTELCOL_JAEGER_ENDPOINT"] != "jaeger:4317" {
		t.Errorf("OTELCOL_JAEGER_ENDPOINT = %q; want jaeger:4317 (the jaeger service's OTLP gRPC)", env["OTELCOL_JAEGER_ENDPOINT"])
	}
}

func TestComposePrometheus(t *testing.T) {
	c, root := loadRepoCompose(t)
	s, ok := c.Services["prometheus"]
	if !ok {
		t.Fatal("no prometheus service")
	}
	args, err := s.Args()
	if err != nil {
		t.Fatal(err)
	}
	cfg := ""
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--config.file="); ok {
			cfg = v
		}
	}
	if got := containerToHost(t, s, root, cfg); got != filepath.Join(root, PrometheusConfig) {
		t.Errorf("prometheus --config.file=%s is %q on the host; want %s", cfg, got, PrometheusConfig)
	}

	// Every scrape target is a compose service on a port it serves.
	b, err := os.ReadFile(filepath.Join(root, PrometheusConfig))
	if err != nil {
		t.Fatal(err)
	}
	var pc struct {
		ScrapeConfigs []struct {
			JobName       string `yaml:"job_name"`
			StaticConfigs []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal(b, &pc); err != nil {
		t.Fatalf("parse %s: %v", PrometheusConfig, err)
	}
	collectorPorts := map[string]bool{"8889": true, "8888": true}
	n := 0
	for _, sc := range pc.ScrapeConfigs {
		for _, st := range sc.StaticConfigs {
			for _, target := range st.Targets {
				n++
				host, port, _ := strings.Cut(target, ":")
				if _, ok := c.Services[host]; !ok {
					t.Errorf("job %s scrapes %s: no compose service %q", sc.JobName, target, host)
				}
				if host == "otel-collector" && !collectorPorts[port] {
					t.Errorf("job %s scrapes %s: the collector serves /metrics on 8889 (exporter) and 8888 (own)", sc.JobName, target)
				}
			}
		}
	}
	if n == 0 {
		t.Error("prometheus.yml scrapes nothing")
	}

	// The alerting rules are mounted where prometheus.yml's rule_files
	// find them in the container.
	var rf struct {
		RuleFiles []string `yaml:"rule_files"`
	}
	if err := yaml.Unmarshal(b, &rf); err != nil {
		t.Fatalf("parse %s: %v", PrometheusConfig, err)
	}
	var found []string
	for _, f := range rf.RuleFiles {
		inContainer := path.Join(path.Dir(cfg), f)
		host := containerToHost(t, s, root, inContainer)
		if host == "" {
			t.Errorf("rule_files %s (%s in the container) is not mounted", f, inContainer)
			continue
		}
		m, _ := filepath.Glob(host)
		found = append(found, m...)
	}
	if !slices.Contains(found, filepath.Join(root, RulesFile)) {
		t.Errorf("the compose Prometheus loads rule files %q, not %s", found, RulesFile)
	}
}

func TestComposeGrafana(t *testing.T) {
	c, root := loadRepoCompose(t)
	s, ok := c.Services["grafana"]
	if !ok {
		t.Fatal("no grafana service")
	}
	if got := containerToHost(t, s, root, "/etc/grafana/provisioning"); got != filepath.Join(root, ProvisioningDir) {
		t.Errorf("/etc/grafana/provisioning is %q on the host; want %s", got, ProvisioningDir)
	}

	// The dashboard provider reads the folder the dashboards are mounted on.
	var prov struct {
		Providers []struct {
			Name    string `yaml:"name"`
			Options struct {
				Path string `yaml:"path"`
			} `yaml:"options"`
		} `yaml:"providers"`
	}
	readYAML(t, filepath.Join(root, ProvisioningDir, "dashboards", "dashboards.yaml"), &prov)
	if len(prov.Providers) == 0 {
		t.Fatal("no dashboard providers")
	}
	for _, p := range prov.Providers {
		if got := containerToHost(t, s, root, p.Options.Path); got != filepath.Join(root, DashboardsDir) {
			t.Errorf("dashboard provider %s reads %s, which is %q on the host; want %s", p.Name, p.Options.Path, got, DashboardsDir)
		}
	}

	// Data sources point at compose services.
	var ds struct {
		Datasources []struct {
			Name string `yaml:"name"`
			UID  string `yaml:"uid"`
			Type string `yaml:"type"`
			URL  string `yaml:"url"`
		} `yaml:"datasources"`
	}
	readYAML(t, filepath.Join(root, ProvisioningDir, "datasources", "datasources.yaml"), &ds)
	want := map[string]string{"prometheus": "http://prometheus:9090", "jaeger": "http://jaeger:16686"}
	got := map[string]string{}
	for _, d := range ds.Datasources {
		got[d.Type] = d.URL
		host := strings.TrimPrefix(d.URL, "http://")
		host, _, _ = strings.Cut(host, ":")
		if _, ok := c.Services[host]; !ok {
			t.Errorf("data source %s points at %s: no compose service %q", d.Name, d.URL, host)
		}
	}
	for typ, url := range want {
		if got[typ] != url {
			t.Errorf("data source of type %s: url %q, want %q", typ, got[typ], url)
		}
	}
	if env, err := s.Env(); err != nil {
		t.Fatal(err)
	} else if home := env["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]; home != "" {
		if p := containerToHost(t, s, root, home); p == "" || !fileExists(p) {
			t.Errorf("home dashboard %s is not a mounted file", home)
		}
	}
}

func TestComposeAgentIsOptional(t *testing.T) {
	c, _ := loadRepoCompose(t)
	s, ok := c.Services["ortel-agent"]
	if !ok {
		t.Fatal("no ortel-agent service")
	}
	if !slices.Contains(s.Profiles, "agent") {
		t.Errorf("ortel-agent profiles = %q; want it under the agent profile so that a plain `up` leaves it out", s.Profiles)
	}
	args, err := s.Args()
	if err != nil {
		t.Fatal(err)
	}
	if len(args) == 0 || args[0] != "agent" {
		t.Errorf("ortel-agent command = %q; want agent", args)
	}
	env, err := s.Env()
	if err != nil {
		t.Fatal(err)
	}
	if env["OTEL_EXPORTER_OTLP_ENDPOINT"] != "http://otel-collector:4317" {
		t.Errorf("ortel-agent OTEL_EXPORTER_OTLP_ENDPOINT = %q", env["OTEL_EXPORTER_OTLP_ENDPOINT"])
	}
}

func readYAML(t *testing.T, p string, v any) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("parse %s: %v", p, err)
	}
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

func TestParseImage(t *testing.T) {
	tests := []struct {
		ref       string
		repo, tag string
		pinned    bool
	}{
		{"otel/opentelemetry-collector-contrib:0.155.0", "otel/opentelemetry-collector-contrib", "0.155.0", true},
		{"prom/prometheus:v3.5.1", "prom/prometheus", "v3.5.1", true},
		{"grafana/grafana", "grafana/grafana", "", false},
		{"grafana/grafana:latest", "grafana/grafana", "latest", false},
		{"jaegertracing/jaeger:stable", "jaegertracing/jaeger", "stable", false},
		{"registry.local:5000/x/y:1.2", "registry.local:5000/x/y", "1.2", true},
		{"registry.local:5000/x/y", "registry.local:5000/x/y", "", false},
		{"busybox@sha256:abcd", "busybox", "", true},
		{"", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.ref, func(t *testing.T) {
			r := ParseImage(tt.ref)
			if r.Repository != tt.repo || r.Tag != tt.tag {
				t.Errorf("ParseImage(%q) = %+v, want repo %q tag %q", tt.ref, r, tt.repo, tt.tag)
			}
			if err := r.Pinned(); (err == nil) != tt.pinned {
				t.Errorf("Pinned() = %v, want pinned=%v", err, tt.pinned)
			}
		})
	}
}

func TestServiceParsing(t *testing.T) {
	const doc = `
services:
  a:
    image: x:1
    command: --config=/etc/c.yaml --verbose
    ports:
      - "127.0.0.1:4317:4317"
      - "9090:9091/udp"
      - "80"
      - target: 3000
        published: "3001"
        host_ip: 127.0.0.1
    volumes:
      - ./conf:/etc/conf:ro
      - data:/var/lib/data
      - /abs/file:/f:rw,z
      - type: bind
        source: ./x
        target: /x
        read_only: true
    environment:
      - A=1
      - B=two=2
  b:
    image: y:2
    command: ["a", "b c"]
    environment:
      K: v
`
	p := filepath.Join(t.TempDir(), "compose.yaml")
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := LoadCompose(p)
	if err != nil {
		t.Fatal(err)
	}
	a := c.Services["a"]
	ports, err := a.PublishedPorts()
	if err != nil {
		t.Fatal(err)
	}
	wantPorts := []Port{
		{"127.0.0.1", 4317, 4317, "tcp"},
		{"", 9090, 9091, "udp"},
		{"", 0, 80, "tcp"},
		{"127.0.0.1", 3001, 3000, "tcp"},
	}
	if !slices.Equal(ports, wantPorts) {
		t.Errorf("ports = %+v, want %+v", ports, wantPorts)
	}
	mounts, err := a.Mounts()
	if err != nil {
		t.Fatal(err)
	}
	wantMounts := []Mount{
		{"./conf", "/etc/conf", true, true},
		{"data", "/var/lib/data", false, false},
		{"/abs/file", "/f", false, true},
		{"./x", "/x", true, true},
	}
	if !slices.Equal(mounts, wantMounts) {
		t.Errorf("mounts = %+v, want %+v", mounts, wantMounts)
	}
	if got := mounts[0].HostPath("/repo"); got != path.Join("/repo", "conf") {
		t.Errorf("HostPath = %q", got)
	}
	env, err := a.Env()
	if err != nil {
		t.Fatal(err)
	}
	if env["A"] != "1" || env["B"] != "two=2" {
		t.Errorf("env = %v", env)
	}
	args, err := a.Args()
	if err != nil || !slices.Equal(args, []string{"--config=/etc/c.yaml", "--verbose"}) {
		t.Errorf("args = %q, %v", args, err)
	}
	b := c.Services["b"]
	if args, err := b.Args(); err != nil || !slices.Equal(args, []string{"a", "b c"}) {
		t.Errorf("args = %q, %v", args, err)
	}
	if env, err := b.Env(); err != nil || env["K"] != "v" {
		t.Errorf("env = %v, %v", env, err)
	}
}

func TestPortErrors(t *testing.T) {
	for _, s := range []string{"a:b", "1:2:3:4", "70000", "127.0.0.1:x:80", "4317-4318:4317-4318"} {
		t.Run(s, func(t *testing.T) {
			if _, err := parseShortPort(s); err == nil {
				t.Errorf("parseShortPort(%q) gave no error", s)
			}
		})
	}
}

func TestLoadComposeErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct{ name, text string }{
		{"not yaml", "services: [\n"},
		{"no services", "version: '3'\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_")+".yaml")
			if err := os.WriteFile(p, []byte(tt.text), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := LoadCompose(p); err == nil || !strings.Contains(err.Error(), p) {
				t.Errorf("LoadCompose error = %v; want one naming %s", err, p)
			}
		})
	}
	if _, err := LoadCompose(filepath.Join(dir, "missing.yaml")); err == nil {
		t.Error("a missing file must be an error")
	}
}
