// The Helm chart's values (charts/tcab/values.yaml) as a zod schema: charts/tcab/values.schema.json is generated
// from it, so `helm install` refuses a bad value with its path named before anything reaches the cluster.
import { z } from 'zod';
import { LogLevel } from './log.ts';
import { HeaderName, ReadAuthMode, isCidr } from './read-auth.ts';
import { ANY_HOST } from './egress.ts';
import { PROVIDER_NAME } from './gateway.ts';
import { DriverPlacementFields } from './driver-placement.ts';

const quantity = z.union([z.string().regex(/^[0-9]+(\.[0-9]+)?(m|Ki|Mi|Gi|Ti|k|M|G|T)?$/), z.number().positive()]);
const image = z.strictObject({ repository: z.string().min(1), tag: z.string(), pullPolicy: z.enum(['Always', 'IfNotPresent', 'Never']).optional() });
const envName = z.string().regex(/^[A-Z_][A-Z0-9_]*$/);
const secretName = z.string().regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/);
const egressProfileName = z.string().max(15).regex(/^[a-z]([a-z0-9]|-[a-z0-9])*$/, 'an egress profile name: lower case letters, digits and single "-" between them, starting with a letter, at most 15 characters');
// "pypi.org" (that host), ".example.com" (the domain and its subdomains): Squid's dstdomain.
const egressHost = z.string().regex(/^\.?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/, 'a host name in lower case, or .domain for the domain and its subdomains');

export const ChartValues = z.strictObject({
  dispatcher: z.strictObject({
    replicas: z.int().min(1),
    image,
    maxInFlight: z.int().min(0).nullable(),
    resources: z.record(z.string(), z.unknown()),
    heapPercentOfMemoryLimit: z.int().min(10).max(90),
    api: z.strictObject({ port: z.int().min(1).max(65535), existingTokenSecret: z.union([z.literal(''), secretName]) }),
    // /metrics alone, unauthenticated, on a port of its own (issue 33).
    metrics: z.strictObject({ port: z.int().min(1).max(65535) }),
    leaseDurationSeconds: z.int().min(2),
    // Attempts after an infrastructure failure (issue 35, dispatcher/status/retry.ts): the wait before the next one
    // (doubling from backoffSeconds up to backoffMaxSeconds) and how long a driver image may fail to pull.
    retry: z.strictObject({ backoffSeconds: z.int().min(0), backoffMaxSeconds: z.int().min(0), imagePullGraceSeconds: z.int().min(0) }),
    logLevel: LogLevel,
    nodeSelector: z.record(z.string(), z.string()),
    tolerations: z.array(z.record(z.string(), z.unknown())),
    // The Pod's affinity (Kubernetes' own shape); {}: the chart's, a preferred anti-affinity that puts the replicas
    // on different nodes (issue 35: a node lost takes one replica, the other leads).
    affinity: z.record(z.string(), z.unknown()),
  }),
  console: z.strictObject({
    enabled: z.boolean(),
    stalledAfterSeconds: z.int().min(1),
    // Who may read (shared/read-auth.ts); proxy mode without trustedCIDRs is refused by the templates (a rule this
    // schema cannot say).
    auth: z.strictObject({
      mode: ReadAuthMode,
      existingReadTokenSecret: z.union([z.literal(''), secretName]),
      sessionMaxAgeSeconds: z.int().min(60).max(30 * 24 * 3600),
      proxy: z.strictObject({ userHeader: HeaderName, trustedCIDRs: z.array(z.string().regex(/^[0-9A-Fa-f:.]+\/\d{1,3}$/, 'a CIDR block such as 10.0.0.0/8').refine(isCidr, 'a CIDR block such as 10.0.0.0/8')) }),
    }),
  }),
  driver: z.strictObject({
    image,
    resources: z.strictObject({ cpu: quantity, memory: quantity }),
    env: z.record(envName, z.string()),
    // hosts: driver Pods get no DNS server, the names they need in /etc/hosts (dispatcher TCAB_DRIVER_DNS).
    dns: z.enum(['hosts', 'cluster']),
    // OpenTelemetry export of every run (driver/sinks/otel.ts); the endpoint and headers are OTLP/HTTP's standard ones.
    otel: z.strictObject({
      enabled: z.boolean(),
      endpoint: z.union([z.literal(''), z.string().regex(/^https?:\/\/[^\s]+$/, 'an http(s) URL')]),
      headersSecret: z.strictObject({ name: z.union([z.literal(''), secretName]), key: z.string().min(1) }),
    }),
    // The node's release store (issue 36, driver/stages/release-store.ts): a hostPath directory on each node where
    // drivers keep installed harness releases for the next run on that node; '' = none (every run installs).
    // eslint-disable-next-line no-control-regex -- a NUL byte cannot be in a path: the regex says so to values.schema.json too
    releaseStore: z.strictObject({ hostPath: z.union([z.literal(''), z.string().regex(/^(\/([^/.\x00][^/\x00]*|\.[^/.\x00][^/\x00]*|\.\.[^/\x00]+))+$/, 'an absolute path without . or .. segments, such as /var/lib/tcab/releases')]) }),
    // Where driver Pods run (issue 35): nodeSelector, tolerations, spread, nodeLostTolerationSeconds. The dispatcher
    // parses the same shape from TCAB_DRIVER_PLACEMENT (shared/driver-placement.ts).
    ...DriverPlacementFields,
  }),
  nats: z.strictObject({
    url: z.union([z.literal(''), z.string().regex(/^(nats|tls|ws|wss):\/\//)]),
    streamReplicas: z.union([z.literal(1), z.literal(3), z.literal(5)]),
    // Per-run NATS identities (decentralized JWT auth); existingSecret: an operator's own keys (`tcab nats auth init`).
    auth: z.strictObject({ enabled: z.boolean(), existingSecret: z.union([z.literal(''), secretName]) }),
    credentialsSecret: z.union([z.literal(''), secretName]),
    // replicas: 1 server, or a JetStream cluster of 3 or 5 (a quorum survives one or two servers lost).
    bundled: z.strictObject({ enabled: z.boolean(), image, storage: quantity, replicas: z.union([z.literal(1), z.literal(3), z.literal(5)]) }),
  }),
  credentials: z.strictObject({
    apiKeys: z.array(z.strictObject({ env: envName, secret: secretName, key: z.string().min(1) })),
    subscriptions: z.record(z.string().regex(/^[a-z][a-z0-9-]*$/), secretName),
  }),
  // The model gateway (issue 34; charts/tcab/templates/gateway.yaml): the one holder of the provider keys. At most
  // one replica: runs' accounts, budgets and revocations live in its memory (gateway/README.md).
  gateway: z.strictObject({
    enabled: z.boolean(),
    replicas: z.int().min(0).max(1),
    // repository "": the dispatcher's image (the gateway ships in it).
    image: z.strictObject({ repository: z.string(), tag: z.string(), pullPolicy: z.enum(['Always', 'IfNotPresent', 'Never']).optional() }),
    port: z.int().min(1).max(65535),
    metricsPort: z.int().min(1).max(65535),
    upstreams: z.record(z.string().regex(PROVIDER_NAME), z.string().regex(/^https?:\/\/[^\s]+$/, 'an http(s) URL')),
    resources: z.record(z.string(), z.unknown()),
    extraEnv: z.record(envName, z.string()),
  }),
  npmCache: z.strictObject({ enabled: z.boolean(), image, storage: quantity, upstream: z.url() }),
  // Egress profiles and the egress proxy (charts/tcab/templates/egress-proxy.yaml; the dispatcher's TCAB_EGRESS is
  // shared/egress.ts EgressConfig). A profile name is also a Service port name, hence at most 15 characters and no
  // "--" (stricter than EGRESS_PROFILE_NAME); ports are unprivileged (the proxy has no capabilities); the template
  // refuses what a schema cannot see: two profiles on one port, a defaultProfile that names no profile.
  egress: z.strictObject({
    enabled: z.boolean(),
    defaultProfile: z.union([z.literal(''), egressProfileName]),
    profiles: z.record(egressProfileName, z.strictObject({ port: z.int().min(1024).max(65535), hosts: z.array(z.union([z.literal(ANY_HOST), egressHost])) })),
    modelHosts: z.array(egressHost),
    deniedDestinations: z.array(z.string().regex(/^[0-9a-fA-F:.]+(\/[0-9]{1,3})?$/, 'an IP address or CIDR (10.0.0.0/8, fc00::/7)')).min(1),
    proxy: z.strictObject({ image, replicas: z.int().min(1), resources: z.record(z.string(), z.unknown()) }),
  }),
  // NetworkPolicies (charts/tcab/templates/networkpolicies.yaml): rules and peers are Kubernetes' own shapes, which
  // the apiserver validates; here only that they are lists of objects.
  networkPolicy: z.strictObject({
    enabled: z.boolean(),
    driverEgress: z.array(z.record(z.string(), z.unknown())),
    gatewayEgress: z.array(z.record(z.string(), z.unknown())),
    apiFrom: z.array(z.record(z.string(), z.unknown())),
    metricsFrom: z.array(z.record(z.string(), z.unknown())),
    natsFrom: z.array(z.record(z.string(), z.unknown())),
    dns: z.strictObject({ namespace: z.string().min(1), podLabels: z.record(z.string(), z.string()) }),
  }),
  // PEM text (the chart makes a ConfigMap) or an existing ConfigMap's name; `key` names the PEM in either.
  extraCA: z.strictObject({
    certificates: z.union([z.literal(''), z.string().regex(/-----BEGIN CERTIFICATE-----/, 'PEM certificates (-----BEGIN CERTIFICATE-----)')]),
    existingConfigMap: z.union([z.literal(''), secretName]),
    key: z.string().regex(/^[-._a-zA-Z0-9]+$/),
  }),
  podSecurityContext: z.record(z.string(), z.unknown()),
});
