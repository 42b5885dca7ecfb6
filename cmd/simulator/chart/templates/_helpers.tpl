{{/* The release's name for its objects, 63 characters at most (a DNS label). */}}
{{- define "sim.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "sim.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "sim.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "sim.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Selector of the simulator's pods (the Redis pod has component=redis). */}}
{{- define "sim.selectorLabels" -}}
app.kubernetes.io/name: {{ include "sim.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: simulator
{{- end -}}

{{- define "sim.redisSelectorLabels" -}}
app.kubernetes.io/name: {{ include "sim.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: redis
{{- end -}}

{{- define "sim.adminService" -}}{{ include "sim.fullname" . }}-admin{{- end -}}
{{- define "sim.redisService" -}}{{ include "sim.fullname" . }}-redis{{- end -}}

{{- define "sim.tlsSecret" -}}
{{- .Values.tls.existingSecret | default (printf "%s-tls" (include "sim.fullname" .)) -}}
{{- end -}}

{{- define "sim.adminSecret" -}}
{{- .Values.admin.existingSecret | default (printf "%s-admin" (include "sim.fullname" .)) -}}
{{- end -}}

{{/* The ConfigMap holding the profile, and its key; empty without one. */}}
{{- define "sim.profileConfigMap" -}}
{{- if .Values.profile.existingConfigMap -}}{{ .Values.profile.existingConfigMap }}{{- else if .Values.profile.json -}}{{ include "sim.fullname" . }}-profile{{- end -}}
{{- end -}}

{{- define "sim.redisURLSecret" -}}
{{- .Values.externalRedis.existingSecret | default (printf "%s-redis-url" (include "sim.fullname" .)) -}}
{{- end -}}

{{/* "true" when the simulator uses a Redis of the user's. */}}
{{- define "sim.externalRedis" -}}
{{- if or .Values.externalRedis.url .Values.externalRedis.existingSecret -}}true{{- end -}}
{{- end -}}

{{/* "true" when the release runs its own Redis. */}}
{{- define "sim.bundledRedis" -}}
{{- if and .Values.redis.enabled (not (include "sim.externalRedis" .)) -}}true{{- end -}}
{{- end -}}

{{/* Refuse what would render a deployment that breaks the spec or the simulator's own rules. */}}
{{- define "sim.validate" -}}
{{- if and .Values.externalRedis.url .Values.externalRedis.existingSecret -}}
{{- fail "externalRedis: give url or existingSecret, not both" -}}
{{- end -}}
{{- if and (gt (int .Values.replicaCount) 1) (not (include "sim.externalRedis" .)) (not .Values.redis.enabled) -}}
{{- fail (printf "replicaCount %d without Redis: in-memory replicas would each keep their own rate counters (spec §8); enable redis or give externalRedis" (int .Values.replicaCount)) -}}
{{- end -}}
{{- if hasKey .Values.config "insecure" -}}
{{- fail "config.insecure: the chart serves HTTPS only (spec §1), and its probes and ServiceMonitor speak HTTPS" -}}
{{- end -}}
{{- if and .Values.profile.json .Values.profile.existingConfigMap -}}
{{- fail "profile: give json or existingConfigMap, not both" -}}
{{- end -}}
{{- if .Values.profile.json -}}
{{- $p := fromJson .Values.profile.json -}}
{{- if or (hasKey $p "Error") (not (hasKey $p "profileVersion")) -}}
{{- fail "profile.json is not a deployment profile (a JSON object with a profileVersion, as conformance profile writes it)" -}}
{{- end -}}
{{- end -}}
{{- range $flag := list "addr" "admin-addr" "admin-token" "tls-cert" "tls-key" "redis-url" "data-dir" "accounts" "profile" -}}
{{- if hasKey $.Values.config $flag -}}
{{- fail (printf "config.%s is set by the chart; see values.yaml for the value that controls it" $flag) -}}
{{- end -}}
{{- end -}}
{{- end -}}
