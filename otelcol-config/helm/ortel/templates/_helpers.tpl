{{/* The chart name, or nameOverride. */}}
{{- define "ortel.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The release-qualified name every object starts with. */}}
{{- define "ortel.fullname" -}}
{{- $name := include "ortel.name" . -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "ortel.labels" -}}
app.kubernetes.io/name: {{ include "ortel.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* Selector labels of one component: pass (list $ "agent"). */}}
{{- define "ortel.selector" -}}
{{- $top := index . 0 -}}
app.kubernetes.io/name: {{ include "ortel.name" $top }}
app.kubernetes.io/instance: {{ $top.Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end -}}

{{/* A pinned image reference: pass (list image defaultTag). Fails on an empty tag or "latest". */}}
{{- define "ortel.image" -}}
{{- $img := index . 0 -}}
{{- $tag := default (index . 1) $img.tag | toString -}}
{{- if or (eq $tag "") (eq $tag "latest") -}}
{{- fail (printf "image %s: set a pinned tag (not %q)" $img.repository $tag) -}}
{{- end -}}
{{- if $img.digest -}}
{{- printf "%s:%s@%s" $img.repository $tag $img.digest -}}
{{- else -}}
{{- printf "%s:%s" $img.repository $tag -}}
{{- end -}}
{{- end -}}

{{/* The gateway's name; the agent's default OTLP endpoint points at its Service. */}}
{{- define "ortel.gateway" -}}
{{- printf "%s-gateway" (include "ortel.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The Secret holding the gateway's export headers. */}}
{{- define "ortel.headersSecret" -}}
{{- if .Values.gateway.headers.existingSecret -}}
{{- .Values.gateway.headers.existingSecret -}}
{{- else -}}
{{- printf "%s-headers" (include "ortel.gateway" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* The header names sent by the gateway, sorted. */}}
{{- define "ortel.headerNames" -}}
{{- if .Values.gateway.headers.existingSecret -}}
{{- toJson (sortAlpha .Values.gateway.headers.names) -}}
{{- else -}}
{{- toJson (sortAlpha (keys .Values.gateway.headers.values)) -}}
{{- end -}}
{{- end -}}

{{/* The scheduling fields of a pod spec from a component's values (agent or gateway). */}}
{{- define "ortel.scheduling" -}}
{{- with .nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .priorityClassName }}
priorityClassName: {{ . | quote }}
{{- end }}
{{- with .imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* Labels of the monitoring objects: the chart's, plus the ones given (pass (list $ extraLabels)). */}}
{{- define "ortel.monitoringLabels" -}}
{{- include "ortel.labels" (index . 0) }}
{{- with index . 1 }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* The two scrape endpoints of a gateway pod, for a ServiceMonitor or PodMonitor (pass the interval). */}}
{{- define "ortel.scrapeEndpoints" -}}
# ortel's metrics and the span metrics: keep the job and instance labels
# the exporter sets from each sender's service.name and service.instance.id.
- port: prom-metrics
  path: /metrics
  interval: {{ . }}
  honorLabels: true
# The collector's own metrics, under the job the alert rules query.
- port: telemetry
  path: /metrics
  interval: {{ . }}
  relabelings:
    - action: replace
      targetLabel: job
      replacement: otelcol-internal
{{- end -}}
