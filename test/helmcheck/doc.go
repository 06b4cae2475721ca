// Package helmcheck renders ortel's Helm chart (otelcol-config/helm/ortel)
// with Helm's own Go packages and decodes every object it produces strictly
// into the Kubernetes API types (the Prometheus Operator's own Go types for
// its ServiceMonitor, PodMonitor and PrometheusRule), so `make test` catches
// a template that renders a field Kubernetes does not know, a wrong type or
// a broken document, without a cluster.
//
// Render runs the chart's templates the way `helm template` does (the same
// engine, the same values coalescing); Decode splits the manifests into
// objects and refuses unknown or duplicate fields.
package helmcheck
