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

{{/* The Secret holding the read token (key `token`): reads of Run and harness data on the API port need it. */}}
{{- define "tcab.readTokenSecret" -}}
{{- default (printf "%s-read-token" (include "tcab.fullname" .)) .Values.console.auth.existingReadTokenSecret -}}
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

{{/*
Egress (values `egress`; shared/egress.ts): the default profile's name, "" resolved to none with the npm cache
(installs go through it) and registries without. Refuses what values.schema.json cannot see: a defaultProfile
naming no profile, and (with the proxy on) two profiles on one port; and checks the profile names again for a
schema that was skipped, since each is a Squid port name and a Service port name.
*/}}
{{- define "tcab.egressDefaultProfile" -}}
{{- $egress := .Values.egress -}}
{{- if not $egress.profiles -}}
{{- fail "egress.profiles is empty: define at least the default profile (e.g. none: {port: 3130, hosts: []})" -}}
{{- end -}}
{{- $ports := dict -}}
{{- range $name, $profile := $egress.profiles -}}
{{- if or (gt (len $name) 15) (not (regexMatch "^[a-z]([a-z0-9]|-[a-z0-9])*$" $name)) -}}
{{- fail (printf "egress.profiles: %q is not a profile name: lower case letters, digits and single \"-\" between them, starting with a letter, at most 15 characters (it names a Service port)" $name) -}}
{{- end -}}
{{- $port := toString (int $profile.port) -}}
{{- if and $egress.enabled (hasKey $ports $port) -}}
{{- fail (printf "egress.profiles: %s and %s both use port %s: give each profile its own port" (get $ports $port) $name $port) -}}
{{- end -}}
{{- $_ := set $ports $port $name -}}
{{- end -}}
{{- $default := $egress.defaultProfile | default (ternary "none" "registries" .Values.npmCache.enabled) -}}
{{- if not (hasKey $egress.profiles $default) -}}
{{- fail (printf "egress.defaultProfile %q (%s) is not one of egress.profiles (%s): add that profile or name another" $default (ternary "as set" "the default for this npmCache.enabled" (ne $egress.defaultProfile "")) (keys $egress.profiles | sortAlpha | join ", ")) -}}
{{- end -}}
{{- $default -}}
{{- end -}}

{{/* A profile's hosts as the proxy applies them: its own plus egress.modelHosts; just "*" when it allows any. */}}
{{- define "tcab.egressHosts" -}}
{{- $root := index . 0 -}}{{- $profile := index . 1 -}}
{{- if has "*" $profile.hosts -}}
{{- list "*" | toJson -}}
{{- else -}}
{{- concat $profile.hosts $root.Values.egress.modelHosts | uniq | toJson -}}
{{- end -}}
{{- end -}}

{{/* The egress proxy's Service, which driver Pods reach on their profile's port. */}}
{{- define "tcab.egressService" -}}
{{- printf "%s-egress" (include "tcab.fullname" .) -}}
{{- end -}}

{{/*
TCAB_EGRESS of the dispatcher: shared/egress.ts EgressConfig as JSON. Every profile with its hosts and, when the
proxy runs, its URL; noProxy: the in-cluster names driver Pods reach directly (NATS, the npm cache, models served
in the cluster).
*/}}
{{- define "tcab.egressConfig" -}}
{{- $default := include "tcab.egressDefaultProfile" . -}}
{{- $profiles := dict -}}
{{- range $name, $profile := .Values.egress.profiles -}}
{{- $out := dict "hosts" (include "tcab.egressHosts" (list $ $profile) | fromJsonArray) -}}
{{- if $.Values.egress.enabled -}}
{{- $_ := set $out "proxy" (printf "http://%s.%s.svc:%d" (include "tcab.egressService" $) $.Release.Namespace (int $profile.port)) -}}
{{- end -}}
{{- $_ := set $profiles $name $out -}}
{{- end -}}
{{- $noProxy := list ".svc" ".svc.cluster.local" ".cluster.local" "localhost" "127.0.0.1" -}}
{{- if include "tcab.natsBundled" . -}}
{{- $noProxy = append $noProxy (printf "%s-nats.%s.svc" (include "tcab.fullname" .) .Release.Namespace) -}}
{{- end -}}
{{- if .Values.npmCache.enabled -}}
{{- $noProxy = append $noProxy (printf "%s-npm-cache.%s.svc" (include "tcab.fullname" .) .Release.Namespace) -}}
{{- end -}}
{{- dict "defaultProfile" $default "profiles" $profiles "noProxy" $noProxy | toJson -}}
{{- end -}}

{{/*
A host list as one Squid dstdomain value: unique, and without the entries a ".domain" in it already covers
(github.com or api.github.com beside .github.com), which Squid refuses to start with.
*/}}
{{- define "tcab.egressDstdomains" -}}
{{- $hosts := uniq . -}}
{{- $kept := list -}}
{{- range $host := $hosts -}}
{{- $covered := false -}}
{{- range $domain := $hosts -}}
{{- if and (hasPrefix "." $domain) (ne $domain $host) (or (eq (printf ".%s" $host) $domain) (hasSuffix $domain $host)) -}}
{{- $covered = true -}}
{{- end -}}
{{- end -}}
{{- if not $covered -}}{{- $kept = append $kept $host -}}{{- end -}}
{{- end -}}
{{- join " " $kept -}}
{{- end -}}

{{/* The model gateway's Service URL (the dispatcher's TCAB_GATEWAY_URL), or "" with gateway.enabled=false. */}}
{{- define "tcab.gatewayUrl" -}}
{{- if .Values.gateway.enabled -}}
{{- printf "http://%s-gateway.%s.svc.cluster.local:%d" (include "tcab.fullname" .) .Release.Namespace (int .Values.gateway.port) -}}
{{- end -}}
{{- end -}}

{{/* The Secret both the gateway and the dispatcher mount: signing-key (tokens) and admin-token (revoke, throttles). */}}
{{- define "tcab.gatewayAuthSecret" -}}
{{- printf "%s-gateway-auth" (include "tcab.fullname" .) -}}
{{- end -}}

{{/* Where that Secret is mounted, in the gateway's and the dispatcher's containers alike. */}}
{{- define "tcab.gatewayAuthDir" -}}/var/run/tcab/gateway-auth{{- end -}}
