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

{{/* "true" when the chart deploys its own NATS: nats.bundled.enabled and no nats.url. */}}
{{- define "tcab.natsBundled" -}}
{{- if and .Values.nats.bundled.enabled (not .Values.nats.url) -}}true{{- end -}}
{{- end -}}

{{/*
The Secret holding the install's NATS keys (bundle.json, auth.conf, reader.creds), or "" with nats.auth off.
Refuses the combinations that would only fail at run time: a user/password Secret next to JWT auth, existingSecret
without auth, and an own NATS (nats.url) with auth on but no keys its server already knows.
*/}}
{{- define "tcab.natsAuthSecret" -}}
{{- $auth := .Values.nats.auth -}}
{{- if $auth.enabled -}}
{{- if .Values.nats.credentialsSecret -}}
{{- fail "nats.credentialsSecret (user/password or token) is for a NATS without tcab's JWT auth: set nats.auth.enabled=false, or drop it" -}}
{{- end -}}
{{- if and .Values.nats.url (not $auth.existingSecret) -}}
{{- fail "nats.url with nats.auth.enabled: name the Secret `tcab nats auth init` made (its auth.conf included by your server) in nats.auth.existingSecret, or set nats.auth.enabled=false (README: Using your own NATS)" -}}
{{- end -}}
{{- default (printf "%s-nats-auth" (include "tcab.fullname" .)) $auth.existingSecret -}}
{{- else if $auth.existingSecret -}}
{{- fail "nats.auth.existingSecret needs nats.auth.enabled=true" -}}
{{- end -}}
{{- end -}}

{{- define "tcab.natsUrl" -}}
{{- if .Values.nats.url -}}
{{- .Values.nats.url -}}
{{- else if include "tcab.natsBundled" . -}}
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
{{- if .Values.driver.otel.enabled -}}
{{- $_ := set $env "TCAB_OTEL" "1" -}}
{{- with .Values.driver.otel.endpoint -}}{{- $_ := set $env "OTEL_EXPORTER_OTLP_ENDPOINT" . -}}{{- end -}}
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
