package helmcheck

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
	corev1 "k8s.io/api/core/v1"

	"github.com/ortel-dev/ortel/internal/telemetry"
	"github.com/ortel-dev/ortel/test/stack"
)

func chartDir(t *testing.T) string {
	t.Helper()
	root, err := stack.RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, ChartDir)
}

// render renders and decodes the chart with the values files given
// (relative to the chart) and the extra values text, failing the test on
// any error.
func render(t *testing.T, extra string, files ...string) map[string]Object {
	t.Helper()
	dir := chartDir(t)
	var paths []string
	for _, f := range files {
		paths = append(paths, filepath.Join(dir, f))
	}
	if extra != "" {
		p := filepath.Join(t.TempDir(), "extra.yaml")
		if err := os.WriteFile(p, []byte(extra), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	ms, err := Render(dir, "rel", "observability", paths...)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := Decode(ms)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Object{}
	for _, o := range objs {
		k := o.Kind + "/" + o.Name
		if _, dup := byName[k]; dup {
			t.Fatalf("%s rendered twice", k)
		}
		byName[k] = o
	}
	return byName
}

func get(t *testing.T, objs map[string]Object, kind, name string) Object {
	t.Helper()
	o, ok := objs[kind+"/"+name]
	if !ok {
		var have []string
		for k := range objs {
			have = append(have, k)
		}
		slices.Sort(have)
		t.Fatalf("no %s %q rendered; have %v", kind, name, have)
	}
	return o
}

func envOf(c corev1.Container) map[string]corev1.EnvVar {
	m := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		m[e.Name] = e
	}
	return m
}

// checkCommon asserts the facts that hold for every values file.
func checkCommon(t *testing.T, objs map[string]Object) {
	t.Helper()
	ds := get(t, objs, "DaemonSet", "rel-ortel-agent").DaemonSet
	pod := ds.Spec.Template.Spec
	if !pod.HostPID {
		t.Error("agent DaemonSet: hostPID is off; the agent cannot see other pods' processes")
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("agent: %d containers, want 1", len(pod.Containers))
	}
	agent := pod.Containers[0]
	if agent.Args[0] != "agent" {
		t.Errorf("agent args %v: want the agent command first", agent.Args)
	}
	env := envOf(agent)
	root := env["ORTEL_HOST_ROOT"].Value
	if root == "" {
		t.Fatal("agent: ORTEL_HOST_ROOT is not set")
	}
	// /proc and /sys of the host, read-only, under ORTEL_HOST_ROOT.
	hostPaths := map[string]string{}
	for _, v := range pod.Volumes {
		if v.HostPath != nil {
			hostPaths[v.Name] = v.HostPath.Path
		}
	}
	mounted := map[string]bool{}
	for _, m := range agent.VolumeMounts {
		hp, ok := hostPaths[m.Name]
		if !ok {
			continue
		}
		if !m.ReadOnly {
			t.Errorf("agent mounts host path %s writable", hp)
		}
		if want := filepath.Join(root, hp); m.MountPath != want {
			t.Errorf("host %s mounted at %s, want %s (under ORTEL_HOST_ROOT)", hp, m.MountPath, want)
		}
		mounted[hp] = true
	}
	for _, hp := range []string{"/proc", "/sys"} {
		if !mounted[hp] {
			t.Errorf("agent: host %s is not mounted", hp)
		}
	}
	if len(hostPaths) != 2 {
		t.Errorf("agent host paths %v: want exactly /proc and /sys", hostPaths)
	}
	for _, name := range []string{"K8S_POD_UID", "K8S_POD_NAME", "K8S_NAMESPACE_NAME", "K8S_NODE_NAME"} {
		if e := env[name]; e.ValueFrom == nil || e.ValueFrom.FieldRef == nil {
			t.Errorf("agent: %s does not come from the downward API", name)
		}
	}
	if ra := env["OTEL_RESOURCE_ATTRIBUTES"].Value; !strings.Contains(ra, "k8s.pod.uid=$(K8S_POD_UID)") {
		t.Errorf("agent OTEL_RESOURCE_ATTRIBUTES %q: want its own pod uid", ra)
	}
	// The gateway's Prometheus exporter keys every series by job
	// (service.name) and instance (service.instance.id): each node's agent
	// needs its own instance, or all nodes write the same series.
	if ra := env["OTEL_RESOURCE_ATTRIBUTES"].Value; !strings.Contains(ra, "service.instance.id=$(K8S_NODE_NAME)") {
		t.Errorf("agent OTEL_RESOURCE_ATTRIBUTES %q: want service.instance.id set to the node's name", ra)
	}
	// The spool lives on an emptyDir: the kubelet evicts a pod whose
	// emptyDir outgrows its sizeLimit, so the limit must hold the spool's
	// bound.
	for _, v := range pod.Volumes {
		if v.Name == "spool" {
			if v.EmptyDir == nil || v.EmptyDir.SizeLimit == nil || v.EmptyDir.SizeLimit.Value() < telemetry.DefaultSpoolMaxBytes {
				t.Errorf("agent spool volume: emptyDir %v, want one with a sizeLimit of at least %d bytes (the spool bound)", v.EmptyDir, telemetry.DefaultSpoolMaxBytes)
			}
		}
	}
	if !slices.Contains(agent.Args, "--out") {
		t.Errorf("agent args %v: no --out, so the spool would go to the read-only root", agent.Args)
	}
	if sc := agent.SecurityContext; sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Error("agent: root file system is not read-only")
	}

	dep := get(t, objs, "Deployment", "rel-ortel-gateway").Deployment
	gw := dep.Spec.Template.Spec.Containers[0]
	for _, c := range []corev1.Container{agent, gw} {
		if err := stack.ParseImage(c.Image).Pinned(); err != nil {
			t.Errorf("container %s: %v", c.Name, err)
		}
	}
	if !slices.Equal(gw.Args, []string{"--config=/conf/collector.yaml", "--config=/conf/gateway.yaml"}) {
		t.Errorf("gateway args %v", gw.Args)
	}
	genv := envOf(gw)
	if got := genv["OTELCOL_GRPC_ENDPOINT"].Value; got != "0.0.0.0:4317" {
		t.Errorf("gateway OTELCOL_GRPC_ENDPOINT %q: the listener must face the cluster", got)
	}
	if want := "http://rel-ortel-gateway:4317"; env["OTEL_EXPORTER_OTLP_ENDPOINT"].Value != want {
		t.Errorf("agent endpoint %q, want the gateway Service %q", env["OTEL_EXPORTER_OTLP_ENDPOINT"].Value, want)
	}
	svc := get(t, objs, "Service", "rel-ortel-gateway").Service
	if !mapsEqual(svc.Spec.Selector, dep.Spec.Template.Labels) {
		t.Errorf("gateway Service selects %v, pods are labelled %v", svc.Spec.Selector, dep.Spec.Template.Labels)
	}
	if !mapsEqual(ds.Spec.Selector.MatchLabels, ds.Spec.Template.Labels) {
		t.Errorf("agent selector %v, pods are labelled %v", ds.Spec.Selector.MatchLabels, ds.Spec.Template.Labels)
	}

	checkProbes(t, agent, gw)
	if !slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Name == "telemetry" && p.Port == 8888 }) {
		t.Errorf("gateway Service ports %+v: no telemetry port 8888 for the monitors to scrape", svc.Spec.Ports)
	}

	// The ConfigMap ships collector.yaml unchanged; it holds no secret.
	cm := get(t, objs, "ConfigMap", "rel-ortel-gateway").ConfigMap
	root2, _ := stack.RepoRoot(".")
	shipped, err := os.ReadFile(filepath.Join(root2, stack.CollectorConfig))
	if err != nil {
		t.Fatal(err)
	}
	if cm.Data["collector.yaml"] != string(shipped) {
		t.Errorf("the chart's files/collector.yaml differs from %s: copy it again", stack.CollectorConfig)
	}
	var overlay map[string]any
	if err := yaml.Unmarshal([]byte(cm.Data["gateway.yaml"]), &overlay); err != nil {
		t.Errorf("gateway.yaml is not YAML: %v\n%s", err, cm.Data["gateway.yaml"])
	}
}

// checkProbes: the agent serves its health (--health-addr) and the gateway
// its health_check extension (OTELCOL_HEALTH_ENDPOINT) on the pod's
// address, on the port their probes ask.
func checkProbes(t *testing.T, agent, gw corev1.Container) {
	t.Helper()
	for _, c := range []struct {
		container       corev1.Container
		listen          string // the address the process listens on
		liveness, ready string // probe paths
	}{
		{agent, argAfter(agent.Args, "--health-addr"), "/healthz", "/readyz"},
		{gw, envOf(gw)["OTELCOL_HEALTH_ENDPOINT"].Value, "/", "/"},
	} {
		name := c.container.Name
		host, port, err := net.SplitHostPort(c.listen)
		if err != nil || host != "0.0.0.0" {
			t.Errorf("%s listens for health on %q: want 0.0.0.0:PORT, for the kubelet to reach", name, c.listen)
			continue
		}
		var health int32
		for _, p := range c.container.Ports {
			if p.Name == "health" {
				health = p.ContainerPort
			}
		}
		if strconv.Itoa(int(health)) != port {
			t.Errorf("%s: container port \"health\" is %d, the process listens on %s", name, health, port)
		}
		for _, p := range []struct {
			kind  string
			probe *corev1.Probe
			path  string
		}{{"liveness", c.container.LivenessProbe, c.liveness}, {"readiness", c.container.ReadinessProbe, c.ready}} {
			if p.probe == nil || p.probe.HTTPGet == nil {
				t.Errorf("%s: no HTTP %s probe", name, p.kind)
				continue
			}
			if g := p.probe.HTTPGet; g.Path != p.path || g.Port.String() != "health" {
				t.Errorf("%s %s probe GET %s on port %s, want GET %s on port health", name, p.kind, g.Path, g.Port.String(), p.path)
			}
		}
	}
}

// argAfter returns the argument that follows flag in args ("" if none).
func argAfter(args []string, flag string) string {
	if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestChartDefaults renders the chart with its own values only.
func TestChartDefaults(t *testing.T) {
	objs := render(t, "")
	checkCommon(t, objs)
	for k := range objs {
		if strings.HasPrefix(k, "ClusterRole") || strings.HasPrefix(k, "Secret/") {
			t.Errorf("%s rendered with default values", k)
		}
	}
	pod := get(t, objs, "DaemonSet", "rel-ortel-agent").DaemonSet.Spec.Template.Spec
	if pod.RuntimeClassName != nil {
		t.Errorf("runtimeClassName %q without nvidia.enabled", *pod.RuntimeClassName)
	}
	// The agent discovers ONNX Runtime processes by default: no pid to know.
	if args := strings.Join(pod.Containers[0].Args, " "); !strings.Contains(args, "--discover --discover-interval 10s") || strings.Contains(args, "--pid") {
		t.Errorf("agent args %q: want --discover --discover-interval 10s and no --pid by default", args)
	}
	// It attaches every discovered process, its probes on 3 s of every
	// minute, with the capabilities the probes need.
	if args := strings.Join(pod.Containers[0].Args, " "); !strings.Contains(args, "--attach --attach-duty 3s/1m --attach-span-ratio 0.01 "+
		"--attach-max-process-probes 18 --attach-max-probes 576 --attach-max-process-runs 10000 --attach-max-runs 50000") {
		t.Errorf("agent args %q: want --attach with the fleet defaults", args)
	}
	if sc := pod.Containers[0].SecurityContext; sc == nil || sc.Capabilities == nil ||
		!slices.Contains(sc.Capabilities.Add, "BPF") || !slices.Contains(sc.Capabilities.Add, "PERFMON") {
		t.Errorf("agent securityContext %+v: attach's probes need BPF and PERFMON", sc)
	}
	cm := get(t, objs, "ConfigMap", "rel-ortel-gateway").ConfigMap
	if strings.Contains(cm.Data["gateway.yaml"], "k8sattributes") {
		t.Error("gateway.yaml names k8sattributes with k8sAttributes.enabled off: ortel's collector build lacks it")
	}
	// Every node exports once per interval to the gateway: 10-30 s, not
	// the CLI's interactive 1 s.
	if d, err := time.ParseDuration(argAfter(pod.Containers[0].Args, "--interval")); err != nil || d < 10*time.Second || d > 30*time.Second {
		t.Errorf("agent --interval %q (%v): want a default from 10s to 30s", argAfter(pod.Containers[0].Args, "--interval"), err)
	}
	// A node agent lands on tainted (GPU) nodes too.
	if !slices.ContainsFunc(pod.Tolerations, func(tl corev1.Toleration) bool {
		return tl.Key == "" && tl.Operator == corev1.TolerationOpExists && tl.Effect == corev1.TaintEffectNoSchedule
	}) {
		t.Errorf("agent tolerations %+v: want every NoSchedule taint tolerated by default", pod.Tolerations)
	}
	for k := range objs {
		if strings.HasPrefix(k, "ServiceMonitor/") || strings.HasPrefix(k, "PodMonitor/") || strings.HasPrefix(k, "PrometheusRule/") || k == "ConfigMap/rel-ortel-dashboard" {
			t.Errorf("%s rendered with default values: the Prometheus Operator and Grafana's sidecar are opt-in", k)
		}
	}
}

// TestChartAllOn renders ci/all-on-values.yaml: NVIDIA runtime, headers
// Secret, k8s attributes processor and its RBAC.
func TestChartAllOn(t *testing.T) {
	objs := render(t, "", "ci/all-on-values.yaml")
	checkCommon(t, objs)
	pod := get(t, objs, "DaemonSet", "rel-ortel-agent").DaemonSet.Spec.Template.Spec
	if pod.RuntimeClassName == nil || *pod.RuntimeClassName != "nvidia" {
		t.Errorf("runtimeClassName %v, want nvidia", pod.RuntimeClassName)
	}
	if envOf(pod.Containers[0])["NVIDIA_VISIBLE_DEVICES"].Value != "all" {
		t.Error("NVIDIA_VISIBLE_DEVICES not set with nvidia.enabled")
	}
	if !strings.Contains(pod.Containers[0].Image, "@sha256:") {
		t.Errorf("agent image %q: the digest is lost", pod.Containers[0].Image)
	}
	if args := strings.Join(pod.Containers[0].Args, " "); !strings.Contains(args, "--discover --discover-interval 5s --attach --attach-duty always "+
		"--attach-span-ratio 0.5 --attach-max-process-probes 27 --attach-max-probes 1000 --attach-max-process-runs 2000 --attach-max-runs 1000000 "+
		"--pid 4242 --pid 4243") {
		t.Errorf("agent args %q: want discovery every 5s, attach with the all-on values (a million written whole), and both pids", args)
	}

	sec := get(t, objs, "Secret", "rel-ortel-gateway-headers").Secret
	if string(sec.Data["authorization"]) != "Bearer not-a-real-token" {
		t.Errorf("headers Secret data %q", sec.Data)
	}
	// The header values reach the collector only through secretKeyRef.
	gw := get(t, objs, "Deployment", "rel-ortel-gateway").Deployment.Spec.Template.Spec
	refs := map[string]bool{}
	for _, e := range gw.Containers[0].Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name == sec.Name {
			refs[e.ValueFrom.SecretKeyRef.Key] = true
		}
	}
	if !refs["authorization"] || !refs["x-tenant"] {
		t.Errorf("gateway env refers to header keys %v, want authorization and x-tenant", refs)
	}
	for k, o := range objs {
		if strings.Contains(renderedText(o), "not-a-real-token") && o.Secret == nil {
			t.Errorf("%s holds a header value in plain text", k)
		}
	}
	cm := get(t, objs, "ConfigMap", "rel-ortel-gateway").ConfigMap
	if !strings.Contains(cm.Data["gateway.yaml"], "k8sattributes:") {
		t.Error("gateway.yaml lacks the k8sattributes processor with k8sAttributes.enabled")
	}
	crb := get(t, objs, "ClusterRoleBinding", "rel-ortel-gateway").ClusterRoleBinding
	if len(crb.Subjects) != 1 || crb.Subjects[0].Name != gw.ServiceAccountName || crb.Subjects[0].Namespace != "observability" {
		t.Errorf("ClusterRoleBinding subjects %+v, want the gateway's service account %q", crb.Subjects, gw.ServiceAccountName)
	}
	get(t, objs, "ClusterRole", "rel-ortel-gateway")

	// Scheduling values reach both pod specs.
	for _, p := range []struct {
		name string
		spec corev1.PodSpec
		prio string
	}{{"agent", pod, "system-node-critical"}, {"gateway", gw, "observability-high"}} {
		if p.spec.Affinity == nil || p.spec.PriorityClassName != p.prio || len(p.spec.ImagePullSecrets) != 1 || p.spec.ImagePullSecrets[0].Name != "regcred" || len(p.spec.Tolerations) != 1 || len(p.spec.NodeSelector) != 1 {
			t.Errorf("%s pod: affinity %v, priorityClassName %q, imagePullSecrets %v, tolerations %v, nodeSelector %v: want the all-on values", p.name, p.spec.Affinity, p.spec.PriorityClassName, p.spec.ImagePullSecrets, p.spec.Tolerations, p.spec.NodeSelector)
		}
	}
	if pod.Affinity.NodeAffinity == nil || gw.Affinity.PodAntiAffinity == nil {
		t.Errorf("affinities: agent %+v, gateway %+v", pod.Affinity, gw.Affinity)
	}
	get(t, objs, "ServiceMonitor", "rel-ortel-gateway")
	get(t, objs, "PrometheusRule", "rel-ortel")
	get(t, objs, "ConfigMap", "rel-ortel-dashboard")
}

// TestChartDiscoverOff: with discover off the agent gets no discovery
// flag (it then watches the pids, or itself).
func TestChartDiscoverOff(t *testing.T) {
	objs := render(t, "agent:\n  discover: false\n  pids: [7]\n")
	checkCommon(t, objs)
	pod := get(t, objs, "DaemonSet", "rel-ortel-agent").DaemonSet.Spec.Template.Spec
	if args := strings.Join(pod.Containers[0].Args, " "); strings.Contains(args, "--discover") || strings.Contains(args, "--attach") || !strings.Contains(args, "--pid 7") {
		t.Errorf("agent args %q: want --pid 7 and no discovery or attach (attach needs discovery)", args)
	}
	objs = render(t, "agent:\n  attach:\n    enabled: false\n")
	pod = get(t, objs, "DaemonSet", "rel-ortel-agent").DaemonSet.Spec.Template.Spec
	if args := strings.Join(pod.Containers[0].Args, " "); !strings.Contains(args, "--discover") || strings.Contains(args, "--attach") {
		t.Errorf("agent args %q with attach.enabled false: want discovery without --attach", args)
	}
}

// TestChartExistingSecret: headers from a Secret the user manages create
// no Secret and refer to it by name.
func TestChartExistingSecret(t *testing.T) {
	objs := render(t, "gateway:\n  headers:\n    existingSecret: backend-auth\n    names: [api-key]\n")
	for k := range objs {
		if strings.HasPrefix(k, "Secret/") {
			t.Errorf("%s rendered with headers.existingSecret", k)
		}
	}
	gw := get(t, objs, "Deployment", "rel-ortel-gateway").Deployment.Spec.Template.Spec.Containers[0]
	e := envOf(gw)["ORTEL_GATEWAY_HEADER_0"]
	if e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil || e.ValueFrom.SecretKeyRef.Name != "backend-auth" || e.ValueFrom.SecretKeyRef.Key != "api-key" {
		t.Errorf("ORTEL_GATEWAY_HEADER_0 = %+v, want backend-auth/api-key", e)
	}
}

// TestChartRefusesUnpinnedImage: a "latest" tag fails the render with a
// message naming the image.
func TestChartRefusesUnpinnedImage(t *testing.T) {
	dir := chartDir(t)
	p := filepath.Join(t.TempDir(), "v.yaml")
	if err := os.WriteFile(p, []byte("agent:\n  image:\n    tag: latest\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Render(dir, "rel", "default", p)
	if err == nil || !strings.Contains(err.Error(), "ortel-dev/ortel") {
		t.Fatalf("render with tag latest: %v, want an error naming the image", err)
	}
}

func renderedText(o Object) string {
	b, _ := yaml.Marshal(o)
	return string(b)
}

// BenchmarkRenderDecode: one render of the chart with ci/all-on-values.yaml
// and the strict decode of every object.
func BenchmarkRenderDecode(b *testing.B) {
	root, err := stack.RepoRoot(".")
	if err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(root, ChartDir)
	vals := filepath.Join(dir, "ci/all-on-values.yaml")
	b.ReportAllocs()
	for b.Loop() {
		ms, err := Render(dir, "rel", "observability", vals)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Decode(ms); err != nil {
			b.Fatal(err)
		}
	}
}

// TestChartRefusesBadValues: values.schema.json turns a misspelt key or a
// malformed value into a render error that names it.
func TestChartRefusesBadValues(t *testing.T) {
	dir := chartDir(t)
	cases := []struct{ name, values, want string }{
		{"misspelt key", "gateway:\n  tracesEndpont: x:4317\n", "tracesEndpont"},
		{"bad interval", "agent:\n  interval: 1 second\n", "interval"},
		{"bad header name", "gateway:\n  headers:\n    values:\n      \"x key\": v\n", "x key"},
		{"pid not a number", "agent:\n  pids: [\"all\"]\n", "pids"},
		{"discover not a boolean", "agent:\n  discover: \"yes\"\n", "discover"},
		{"bad discover interval", "agent:\n  discoverInterval: often\n", "discoverInterval"},
		{"bad attach duty", "agent:\n  attach:\n    duty: 3s\n", "duty"},
		{"span ratio above 1", "agent:\n  attach:\n    spanRatio: 2\n", "spanRatio"},
		{"misspelt attach key", "agent:\n  attach:\n    maxProbe: 9\n", "maxProbe"},
		{"pull secret not an object", "gateway:\n  imagePullSecrets: [regcred]\n", "imagePullSecrets"},
		{"health port out of range", "agent:\n  health:\n    port: 70000\n", "port"},
		{"misspelt probe field", "gateway:\n  health:\n    livenessProbe:\n      periodSecond: 5\n", "periodSecond"},
		{"bad monitor interval", "serviceMonitor:\n  interval: soon\n", "interval"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "v.yaml")
			if err := os.WriteFile(p, []byte(tc.values), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Render(dir, "rel", "default", p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("render with %q: %v, want an error naming %q", tc.values, err, tc.want)
			}
		})
	}
}
