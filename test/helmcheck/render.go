package helmcheck

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// ChartDir is the chart's folder, relative to the repository root.
const ChartDir = "otelcol-config/helm/ortel"

// Manifest is one rendered template file.
type Manifest struct {
	Template string // e.g. "ortel/templates/agent-daemonset.yaml"
	Text     string
}

// Render renders the chart in dir as release name in namespace, with the
// values files given (later files win, as with helm's -f) over the chart's
// values.yaml. It returns the non-empty manifests sorted by template name.
func Render(dir, name, namespace string, valuesFiles ...string) ([]Manifest, error) {
	chrt, err := loader.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("load chart %q: %w", dir, err)
	}
	vals := map[string]any{}
	for _, f := range valuesFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("read values %q: %w", f, err)
		}
		v, err := chartutil.ReadValues(b)
		if err != nil {
			return nil, fmt.Errorf("values %q: %w", f, err)
		}
		vals = chartutil.CoalesceTables(v, vals)
	}
	if err := chartutil.ProcessDependenciesWithMerge(chrt, vals); err != nil {
		return nil, fmt.Errorf("chart %q: %w", dir, err)
	}
	top, err := chartutil.ToRenderValues(chrt, vals, chartutil.ReleaseOptions{
		Name: name, Namespace: namespace, Revision: 1, IsInstall: true,
	}, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, fmt.Errorf("chart %q: values: %w", dir, err)
	}
	out, err := engine.Render(chrt, top)
	if err != nil {
		return nil, fmt.Errorf("render chart %q: %w", dir, err)
	}
	var ms []Manifest
	for tpl, text := range out {
		if strings.HasPrefix(filepath.Base(tpl), "_") || strings.TrimSpace(text) == "" {
			continue
		}
		ms = append(ms, Manifest{Template: tpl, Text: text})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Template < ms[j].Template })
	return ms, nil
}

// Object is one decoded Kubernetes object: exactly one of the typed
// pointers is set, matching Kind.
type Object struct {
	Template string
	Kind     string
	Name     string

	DaemonSet          *appsv1.DaemonSet
	Deployment         *appsv1.Deployment
	Service            *corev1.Service
	ServiceAccount     *corev1.ServiceAccount
	ConfigMap          *corev1.ConfigMap
	Secret             *corev1.Secret
	ClusterRole        *rbacv1.ClusterRole
	ClusterRoleBinding *rbacv1.ClusterRoleBinding
	// The Prometheus Operator's custom resources, decoded into the
	// operator's own Go API types (the source of its CRD schemas).
	ServiceMonitor *monitoringv1.ServiceMonitor
	PodMonitor     *monitoringv1.PodMonitor
	PrometheusRule *monitoringv1.PrometheusRule
}

// Decode splits each manifest into its YAML documents and decodes each one
// strictly (unknown fields, duplicate fields and type mismatches are
// errors, and field names match case-sensitively, as in the API server)
// into the Kubernetes API type its apiVersion and kind name. A kind
// the chart is not expected to produce is an error too.
func Decode(ms []Manifest) ([]Object, error) {
	var objs []Object
	for _, m := range ms {
		for i, doc := range splitDocuments(m.Text) {
			o, err := decodeOne(doc)
			if err != nil {
				return nil, fmt.Errorf("%s, document %d: %w", m.Template, i+1, err)
			}
			o.Template = m.Template
			objs = append(objs, o)
		}
	}
	return objs, nil
}

// splitDocuments splits a YAML stream at its "---" lines, dropping
// documents that hold only comments or blanks.
func splitDocuments(text string) []string {
	var docs []string
	var cur []string
	flush := func() {
		doc := strings.Join(cur, "\n")
		cur = cur[:0]
		for _, l := range strings.Split(doc, "\n") {
			if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
				docs = append(docs, doc)
				return
			}
		}
	}
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimRight(l, " \t") == "---" {
			flush()
			continue
		}
		cur = append(cur, l)
	}
	flush()
	return docs
}

type typeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
}

func decodeOne(doc string) (Object, error) {
	var tm typeMeta
	if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
		return Object{}, fmt.Errorf("not YAML: %w", err)
	}
	o := Object{Kind: tm.Kind, Name: tm.Metadata.Name}
	if tm.Metadata.Name == "" {
		return o, fmt.Errorf("%s %s has no metadata.name", tm.APIVersion, tm.Kind)
	}
	var target any
	want := ""
	switch tm.Kind {
	case "DaemonSet":
		o.DaemonSet = &appsv1.DaemonSet{}
		target, want = o.DaemonSet, "apps/v1"
	case "Deployment":
		o.Deployment = &appsv1.Deployment{}
		target, want = o.Deployment, "apps/v1"
	case "Service":
		o.Service = &corev1.Service{}
		target, want = o.Service, "v1"
	case "ServiceAccount":
		o.ServiceAccount = &corev1.ServiceAccount{}
		target, want = o.ServiceAccount, "v1"
	case "ConfigMap":
		o.ConfigMap = &corev1.ConfigMap{}
		target, want = o.ConfigMap, "v1"
	case "Secret":
		o.Secret = &corev1.Secret{}
		target, want = o.Secret, "v1"
	case "ClusterRole":
		o.ClusterRole = &rbacv1.ClusterRole{}
		target, want = o.ClusterRole, "rbac.authorization.k8s.io/v1"
	case "ClusterRoleBinding":
		o.ClusterRoleBinding = &rbacv1.ClusterRoleBinding{}
		target, want = o.ClusterRoleBinding, "rbac.authorization.k8s.io/v1"
	case "ServiceMonitor":
		o.ServiceMonitor = &monitoringv1.ServiceMonitor{}
		target, want = o.ServiceMonitor, "monitoring.coreos.com/v1"
	case "PodMonitor":
		o.PodMonitor = &monitoringv1.PodMonitor{}
		target, want = o.PodMonitor, "monitoring.coreos.com/v1"
	case "PrometheusRule":
		o.PrometheusRule = &monitoringv1.PrometheusRule{}
		target, want = o.PrometheusRule, "monitoring.coreos.com/v1"
	default:
		return o, fmt.Errorf("%s %q: kind %q is not one the chart is expected to render", tm.APIVersion, tm.Metadata.Name, tm.Kind)
	}
	if tm.APIVersion != want {
		return o, fmt.Errorf("%s %q: apiVersion %q, want %q", tm.Kind, tm.Metadata.Name, tm.APIVersion, want)
	}
	// The API server's own decoding: field names match case-sensitively
	// (encoding/json would take "hostPid" for hostPID), and unknown or
	// duplicate fields are errors.
	js, err := yaml.YAMLToJSONStrict([]byte(doc))
	if err != nil {
		return o, fmt.Errorf("%s %q: %w", tm.Kind, tm.Metadata.Name, err)
	}
	strict, err := kjson.UnmarshalStrict(js, target)
	if err != nil {
		return o, fmt.Errorf("%s %q: %w", tm.Kind, tm.Metadata.Name, err)
	}
	if len(strict) > 0 {
		return o, fmt.Errorf("%s %q: %w", tm.Kind, tm.Metadata.Name, errors.Join(strict...))
	}
	return o, nil
}
