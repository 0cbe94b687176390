{{- define "tcab.fullname" -}}
{{- printf "%s-tcab" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "tcab.labels" -}}
app.kubernetes.io/name: tcab
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "tcab.selector" -}}
app.kubernetes.io/name: tcab
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: dispatcher
{{- end -}}

{{- define "tcab.tokenSecret" -}}
{{- default (printf "%s-api-token" (include "tcab.fullname" .)) .Values.dispatcher.api.existingTokenSecret -}}
{{- end -}}

{{- define "tcab.natsUrl" -}}
{{- if .Values.nats.url -}}
{{- .Values.nats.url -}}
{{- else if .Values.nats.bundled.enabled -}}
{{- printf "nats://%s-nats.%s.svc:4222" (include "tcab.fullname" .) .Release.Namespace -}}
{{- else -}}
{{- fail "set nats.url, or nats.bundled.enabled=true to try it with a bundled NATS" -}}
{{- end -}}
{{- end -}}

{{- define "tcab.driverEnv" -}}
{{- $env := deepCopy .Values.driver.env -}}
{{- if .Values.npmCache.enabled -}}
{{- $_ := set $env "TCAB_NPM_REGISTRY" (printf "http://%s-npm-cache.%s.svc:4873/" (include "tcab.fullname" .) .Release.Namespace) -}}
{{- end -}}
{{- toJson $env -}}
{{- end -}}

{{/* The credentials Secrets named in values (API keys and subscriptions), sorted and unique, as a JSON list. */}}
{{- define "tcab.credentialSecretNames" -}}
{{- $names := list -}}
{{- range .Values.credentials.apiKeys -}}{{- $names = append $names .secret -}}{{- end -}}
{{- range $slug, $secret := .Values.credentials.subscriptions -}}{{- $names = append $names $secret -}}{{- end -}}
{{- $names | uniq | sortAlpha | toJson -}}
{{- end -}}

{{/* An image reference from {repository, tag}: the tag defaults to the chart's appVersion. Call with (list . .Values.x.image). */}}
{{- define "tcab.image" -}}
{{- $root := index . 0 -}}{{- $image := index . 1 -}}
{{- printf "%s:%s" $image.repository (default $root.Chart.AppVersion $image.tag) -}}
{{- end -}}

{{/* The ConfigMap holding the extra CA certificates, or "" when there are none. */}}
{{- define "tcab.extraCAConfigMap" -}}
{{- if .Values.extraCA.existingConfigMap -}}
{{- .Values.extraCA.existingConfigMap -}}
{{- else if .Values.extraCA.certificates -}}
{{- printf "%s-extra-ca" (include "tcab.fullname" .) -}}
{{- end -}}
{{- end -}}

{{/* Container env, volumeMount and Pod volume for the extra CA (each empty without one). */}}
{{- define "tcab.extraCAEnv" -}}
{{- if include "tcab.extraCAConfigMap" . -}}
- name: NODE_EXTRA_CA_CERTS
  value: /etc/tcab/extra-ca/ca.crt
{{- end -}}
{{- end -}}
{{- define "tcab.extraCAVolumeMount" -}}
{{- if include "tcab.extraCAConfigMap" . -}}
- { name: extra-ca, mountPath: /etc/tcab/extra-ca, readOnly: true }
{{- end -}}
{{- end -}}
{{- define "tcab.extraCAVolume" -}}
{{- with include "tcab.extraCAConfigMap" . -}}
- name: extra-ca
  configMap:
    name: {{ . }}
    items: [{ key: {{ $.Values.extraCA.key | quote }}, path: ca.crt }]
{{- end -}}
{{- end -}}
