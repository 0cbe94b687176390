// The Helm chart's values (charts/tcab/values.yaml) as a zod schema: charts/tcab/values.schema.json is generated
// from it, so `helm install` refuses a bad value with its path named before anything reaches the cluster.
import { z } from 'zod';
import { LogLevel } from './log.ts';

const quantity = z.union([z.string().regex(/^[0-9]+(\.[0-9]+)?(m|Ki|Mi|Gi|Ti|k|M|G|T)?$/), z.number().positive()]);
const image = z.strictObject({ repository: z.string().min(1), tag: z.string(), pullPolicy: z.enum(['Always', 'IfNotPresent', 'Never']).optional() });
const envName = z.string().regex(/^[A-Z_][A-Z0-9_]*$/);
const secretName = z.string().regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/);

export const ChartValues = z.strictObject({
  dispatcher: z.strictObject({
    replicas: z.int().min(1),
    image,
    maxInFlight: z.int().min(0).nullable(),
    resources: z.record(z.string(), z.unknown()),
    heapPercentOfMemoryLimit: z.int().min(10).max(90),
    api: z.strictObject({ port: z.int().min(1).max(65535), existingTokenSecret: z.union([z.literal(''), secretName]) }),
    leaseDurationSeconds: z.int().min(2),
    logLevel: LogLevel,
    nodeSelector: z.record(z.string(), z.string()),
    tolerations: z.array(z.record(z.string(), z.unknown())),
  }),
  console: z.strictObject({ enabled: z.boolean(), stalledAfterSeconds: z.int().min(1) }),
  driver: z.strictObject({
    image,
    resources: z.strictObject({ cpu: quantity, memory: quantity }),
    env: z.record(envName, z.string()),
    // OpenTelemetry export of every run (driver/sinks/otel.ts); the endpoint and headers are OTLP/HTTP's standard ones.
    otel: z.strictObject({
      enabled: z.boolean(),
      endpoint: z.union([z.literal(''), z.string().regex(/^https?:\/\/[^\s]+$/, 'an http(s) URL')]),
      headersSecret: z.strictObject({ name: z.union([z.literal(''), secretName]), key: z.string().min(1) }),
    }),
  }),
  nats: z.strictObject({
    url: z.union([z.literal(''), z.string().regex(/^(nats|tls|ws|wss):\/\//)]),
    // Per-run NATS identities (decentralized JWT auth); existingSecret: an operator's own keys (`tcab nats auth init`).
    auth: z.strictObject({ enabled: z.boolean(), existingSecret: z.union([z.literal(''), secretName]) }),
    credentialsSecret: z.union([z.literal(''), secretName]),
    bundled: z.strictObject({ enabled: z.boolean(), image, storage: quantity }),
  }),
  credentials: z.strictObject({
    apiKeys: z.array(z.strictObject({ env: envName, secret: secretName, key: z.string().min(1) })),
    subscriptions: z.record(z.string().regex(/^[a-z][a-z0-9-]*$/), secretName),
  }),
  npmCache: z.strictObject({ enabled: z.boolean(), image, storage: quantity, upstream: z.url() }),
  // PEM text (the chart makes a ConfigMap) or an existing ConfigMap's name; `key` names the PEM in either.
  extraCA: z.strictObject({
    certificates: z.union([z.literal(''), z.string().regex(/-----BEGIN CERTIFICATE-----/, 'PEM certificates (-----BEGIN CERTIFICATE-----)')]),
    existingConfigMap: z.union([z.literal(''), secretName]),
    key: z.string().regex(/^[-._a-zA-Z0-9]+$/),
  }),
  podSecurityContext: z.record(z.string(), z.unknown()),
});
