// The dispatcher's configuration, from its environment (set by the Helm chart). Validated once at start; a bad
// value stops the dispatcher with the variable named.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { formatIssues } from '../shared/zod-issues.ts';
import { InvalidInputError } from '../shared/errors.ts';
import { LogLevel } from '../shared/log.ts';
import { Cidr, DEFAULT_PROXY_USER_HEADER, DEFAULT_SESSION_MAX_AGE_SECONDS, HeaderName, ReadAuthMode } from '../shared/read-auth.ts';
import { EgressConfig } from '../shared/egress.ts';
import { DriverPlacement } from '../shared/driver-placement.ts';
import { GATEWAY_ENV } from '../shared/gateway.ts';
import { signingKeyFrom } from '../gateway/token.ts';

/** An unset or empty variable takes the default (the chart renders optional values as ""). */
const unsetIfEmpty = (v: unknown) => (v === '' ? undefined : v);
const number = (schema: z.ZodNumber, fallback: number) => z.preprocess(unsetIfEmpty, z.coerce.number().pipe(schema).default(fallback));
const text = (fallback: string) => z.preprocess(unsetIfEmpty, z.string().min(1).default(fallback));
const optionalText = z.preprocess(unsetIfEmpty, z.string().min(1).optional());

const intOrNull = z
  .string()
  .optional()
  .transform((v, ctx) => {
    if (v === undefined || v === '' || v === 'unlimited') return null;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) {
      ctx.addIssue({ code: 'custom', message: `must be a non-negative integer or "unlimited", got "${v}"` });
      return z.NEVER;
    }
    return n;
  });

/** An environment variable holding JSON, parsed and validated, with a message saying what it must be. */
function jsonVariable<T>(schema: z.ZodType<T>, fallback: string, what: string) {
  return z
    .string()
    .default(fallback)
    .transform((v, ctx): T => {
      try {
        return schema.parse(JSON.parse(v));
      } catch (cause) {
        // A schema's issues by path (spread.maxSkew: ...), not zod's JSON dump of them.
        ctx.addIssue({ code: 'custom', message: `must be ${what}: ${cause instanceof z.ZodError ? formatIssues(cause) : (cause as Error).message}` });
        return z.NEVER;
      }
    });
}

/** A provider key the operator stored in a Secret: which Secret key holds which environment variable. */
export const ApiKeySecretRef = z.strictObject({ env: z.string().regex(/^[A-Z_][A-Z0-9_]*$/), secret: z.string().min(1), key: z.string().min(1) });
export type ApiKeySecretRef = z.infer<typeof ApiKeySecretRef>;

/** The ConfigMap key holding extra CA certificates (PEM) for driver Pods; the chart's `extraCA` values. */
export const ExtraCaRef = z.strictObject({ configMap: z.string().min(1), key: z.string().min(1) });
export type ExtraCaRef = z.infer<typeof ExtraCaRef>;

/** A Secret key in the Run's namespace (the chart's driver.otel.headersSecret). */
export const SecretKeyRef = z.strictObject({ secret: z.string().min(1), key: z.string().min(1) });

export const DispatcherConfig = z.object({
  TCAB_NAMESPACE: z.string().min(1).default('default'),
  TCAB_DISPATCHER_MAX_INFLIGHT: intOrNull,
  TCAB_DRIVER_IMAGE: z.string().min(1).default('tcab/driver:latest'),
  TCAB_DRIVER_CPU: z.string().default('1'),
  TCAB_DRIVER_MEMORY: z.string().default('2Gi'),
  TCAB_NATS_URL: z.string().min(1).default('nats://nats:4222'),
  /** NATS as driver Pods reach it, when not where the dispatcher does (a dispatcher outside the Pod network); default TCAB_NATS_URL. */
  TCAB_DRIVER_NATS_URL: optionalText,
  /** Secret holding the driver's NATS credentials (keys `user`/`password` or `token`), optional. */
  TCAB_NATS_SECRET: z.string().optional(),
  /**
   * The install's NATS auth Secret (nats/auth: bundle.json, auth.conf, reader.creds). Set: NATS runs in operator
   * mode; the dispatcher creates this Secret on first start if it is missing (never overwrites it), connects as its
   * own identity minted from it, and gives each Run's driver a credential of its own. Unset: no NATS auth.
   */
  TCAB_NATS_AUTH_SECRET: optionalText,
  /** JetStream replicas of the run stream: the dispatcher creates it so and scales an existing one to it. */
  TCAB_NATS_STREAM_REPLICAS: number(z.number().int().min(1).max(5), 1),
  /**
   * The dispatcher's ServiceAccount (the chart's downward API, spec.serviceAccountName): owner of the auth Secret
   * the dispatcher creates, so `helm uninstall` removes the keys with it (dispatcher/auth/auth-secret.ts).
   */
  TCAB_SERVICE_ACCOUNT: optionalText,
  /** JSON list of ApiKeySecretRef. */
  TCAB_API_KEY_SECRETS: jsonVariable(z.array(ApiKeySecretRef), '[]', 'a JSON list of {env, secret, key}'),
  /** JSON object slug -> Secret name holding that harness's subscription files (keyed by basename). */
  TCAB_SUBSCRIPTION_SECRETS: jsonVariable(z.record(z.string(), z.string()), '{}', 'a JSON object {slug: secretName}'),
  /** Extra driver env (e.g. TCAB_NPM_REGISTRY for a cluster-local npm cache), JSON object. */
  TCAB_DRIVER_ENV: jsonVariable(z.record(z.string(), z.string()), '{}', 'a JSON object of strings'),
  /** JSON {configMap, key}: mounted into driver Pods at EXTRA_CA_PATH; unset = no extra CA. */
  TCAB_DRIVER_EXTRA_CA: jsonVariable(ExtraCaRef.nullable(), 'null', 'a JSON object {configMap, key}'),
  /**
   * JSON {secret, key}: the npm cache's install credential (npm `_auth`), mounted root-only into driver Pods for the
   * install stages (driver/stages/npm-auth.ts); unset = the registry needs none.
   */
  TCAB_DRIVER_NPM_AUTH_SECRET: jsonVariable(SecretKeyRef.nullable(), 'null', 'a JSON object {secret, key}'),
  /** JSON {secret, key}: driver Pods take OTEL_EXPORTER_OTLP_HEADERS from it (an OTLP token); unset = none. */
  TCAB_DRIVER_OTEL_HEADERS_SECRET: jsonVariable(SecretKeyRef.nullable(), 'null', 'a JSON object {secret, key}'),
  /**
   * The install's egress profiles (the chart's `egress` values, shared/egress.ts): JSON, or unset = none (driver
   * Pods get no proxy, and a Run naming a profile is refused).
   */
  TCAB_EGRESS: jsonVariable(EgressConfig.nullable(), 'null', 'a JSON object {defaultProfile, profiles, noProxy}'),
  /**
   * Where driver Pods run (the chart's driver.nodeSelector, .tolerations, .spread, .nodeLostTolerationSeconds;
   * shared/driver-placement.ts): JSON, or unset = no nodeSelector or tolerations of the operator's, spread over nodes
   * by harness, evicted 30 s after their node is lost.
   */
  TCAB_DRIVER_PLACEMENT: jsonVariable(DriverPlacement, '{}', 'a JSON object {nodeSelector, tolerations, spread, nodeLostTolerationSeconds}'),
  /**
   * The node's release store (the chart's driver.releaseStore.hostPath): a hostPath directory mounted into every
   * driver Pod, where drivers keep installed releases for the next run on the node (releases/) and make each run's
   * install prefix (prefixes/); unset = none.
   */
  TCAB_DRIVER_RELEASE_STORE: z.preprocess(unsetIfEmpty, z.string().regex(/^\/[^\0]*$/, 'must be an absolute path').optional()),
  /**
   * How driver Pods resolve names: `cluster` (the cluster's DNS, Kubernetes' default) or `hosts` (no DNS at all:
   * the names the run needs are written into the Pod's /etc/hosts, so an agent cannot enumerate the cluster's
   * Services and Pods through DNS; the chart's default).
   */
  TCAB_DRIVER_DNS: z.preprocess(unsetIfEmpty, z.enum(['cluster', 'hosts']).default('cluster')),
  TCAB_API_PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  TCAB_API_TOKEN_FILE: z.string().default('/var/run/tcab/api-token/token'),
  /** The read token's file (the chart's <fullname>-read-token Secret), read per request: it may be rotated. */
  TCAB_API_READ_TOKEN_FILE: z.string().default('/var/run/tcab/read-token/token'),
  /**
   * Who may read Run and harness data on the API port (shared/read-auth.ts): `token` (the read or write token, or a
   * session made with one), `proxy` (also a user asserted by a proxy in TCAB_CONSOLE_TRUSTED_CIDRS), `open` (anyone).
   */
  TCAB_CONSOLE_AUTH_MODE: z.preprocess(unsetIfEmpty, ReadAuthMode.default('token')),
  /** The header a trusted proxy names the user in (proxy mode). */
  TCAB_CONSOLE_PROXY_USER_HEADER: z.preprocess(unsetIfEmpty, HeaderName.default(DEFAULT_PROXY_USER_HEADER)),
  /** JSON list of CIDR blocks: peers whose user header (proxy mode) and X-Forwarded-Proto are believed. */
  TCAB_CONSOLE_TRUSTED_CIDRS: jsonVariable(z.array(Cidr), '[]', 'a JSON list of CIDR blocks such as ["10.0.0.0/8"]'),
  /** How long a console login lasts. */
  TCAB_CONSOLE_SESSION_SECONDS: number(z.number().int().min(60).max(30 * 24 * 3600), DEFAULT_SESSION_MAX_AGE_SECONDS),
  /** The port /metrics is served on, unauthenticated (the chart's dispatcher.metrics.port); unset: not served. */
  TCAB_METRICS_PORT: z.preprocess(unsetIfEmpty, z.coerce.number().int().min(1).max(65535).optional()),
  /** Address the HTTP API listens on. */
  TCAB_API_HOST: text('0.0.0.0'),
  /** Seconds a finished driver Pod may wait for its result message before the Run fails without one. */
  TCAB_RESULT_GRACE_SECONDS: number(z.number().min(0), 30),
  /** The first wait before another attempt of a Run that failed on infrastructure; each later one doubles (status/retry.ts). */
  TCAB_RETRY_BACKOFF_SECONDS: number(z.number().min(0), 10),
  /** The longest wait between two attempts. */
  TCAB_RETRY_BACKOFF_MAX_SECONDS: number(z.number().min(0), 300),
  /** Seconds a driver Pod's image may fail to pull (ErrImagePull, ImagePullBackOff) before its attempt ends ImagePullFailed. */
  TCAB_IMAGE_PULL_GRACE_SECONDS: number(z.number().min(0), 120),
  /** The Lease the replicas elect their leader on. */
  TCAB_LEADER_LEASE: text('tcab-dispatcher'),
  /** Seconds a Lease holder that stopped renewing keeps it before a candidate takes it over. */
  TCAB_LEASE_DURATION_SECONDS: number(z.number().int().min(1), 10),
  /** Milliseconds between Lease acquire/renew rounds (must be well under the lease duration). */
  TCAB_LEASE_RETRY_MS: number(z.number().int().min(100), 2000),
  /** This replica's identity in the Lease; else POD_NAME (the chart's downward API), else the hostname. */
  TCAB_DISPATCHER_ID: optionalText,
  POD_NAME: optionalText,
  /** Serve the operator console (console/server) on the API's port: the chart's console.enabled. */
  TCAB_CONSOLE_ENABLED: z.preprocess(unsetIfEmpty, z.enum(['true', 'false']).default('true')).transform((v) => v === 'true'),
  /** A non-final Run with no event for this long is shown stalled: the chart's console.stalledAfterSeconds. */
  TCAB_CONSOLE_STALLED_AFTER_SECONDS: number(z.number().int().min(1), 300),
  /** The dispatcher's own log level (pino). */
  TCAB_LOG_LEVEL: z.preprocess(unsetIfEmpty, LogLevel.default('info')),
  /**
   * The cluster's model gateway (issue 34; the chart's gateway Service, e.g. http://t-tcab-gateway.ns.svc.cluster.local:8080).
   * Set: a Run whose key can go through it gets a per-run token instead of the provider key (pods/gateway-plan.ts),
   * and the dispatcher revokes it when the Run ends. Unset: no gateway, provider keys are injected as before.
   */
  TCAB_GATEWAY_URL: z.preprocess(unsetIfEmpty, z.url({ protocol: /^https?$/ }).transform((u) => u.replace(/\/+$/, '')).optional()),
  /** The gateway auth Secret's signing key file (base64 of >= 32 bytes): the dispatcher mints the tokens with it. */
  [GATEWAY_ENV.signingKeyFile]: optionalText,
  /** The gateway auth Secret's admin token file: the dispatcher's revocations are authorised with it. */
  [GATEWAY_ENV.adminTokenFile]: optionalText,
}).refine((c) => !(c.TCAB_NATS_AUTH_SECRET && c.TCAB_NATS_SECRET), {
  // With per-run credentials a driver must hold its own run's identity and nothing else: a shared NATS user given
  // to every driver Pod would let any run publish to every other run's subjects.
  message: 'a shared driver NATS user (TCAB_NATS_SECRET) cannot be combined with per-run credentials (TCAB_NATS_AUTH_SECRET): unset one',
  path: ['TCAB_NATS_SECRET'],
}).refine((c) => c.TCAB_CONSOLE_AUTH_MODE !== 'proxy' || c.TCAB_CONSOLE_TRUSTED_CIDRS.length > 0, {
  // A proxy mode that trusts no peer would refuse every proxied user; one that trusted every peer, anyone's header.
  message: 'proxy mode needs the CIDR blocks of the proxies whose user header is trusted',
  path: ['TCAB_CONSOLE_TRUSTED_CIDRS'],
}).refine((c) => !c.TCAB_GATEWAY_URL || (c[GATEWAY_ENV.signingKeyFile] && c[GATEWAY_ENV.adminTokenFile]), {
  // A gateway the dispatcher cannot mint for (or revoke at) would fail every Run routed to it: refused at start.
  message: `a gateway (TCAB_GATEWAY_URL) needs its auth Secret's files: set ${GATEWAY_ENV.signingKeyFile} and ${GATEWAY_ENV.adminTokenFile}`,
  path: ['TCAB_GATEWAY_URL'],
});
export type DispatcherConfig = z.infer<typeof DispatcherConfig>;

export function dispatcherConfig(env: Readonly<Record<string, string | undefined>>): DispatcherConfig {
  const parsed = DispatcherConfig.safeParse(env);
  if (!parsed.success) throw new InvalidInputError('dispatcher configuration', formatIssues(parsed.error));
  return parsed.data;
}

/** What the dispatcher needs of the cluster's gateway: where it is, the key tokens are signed with, its admin token. */
export interface ClusterGateway {
  url: string;
  signingKey: Buffer;
  adminToken: string;
}

/**
 * The gateway's credentials, read once at start from the files the chart mounts (its auth Secret, shared with the
 * gateway Deployment); undefined without TCAB_GATEWAY_URL. A missing, unreadable or too short file stops the
 * dispatcher with its variable named (never the file's content). A rotated Secret needs a restart of both.
 */
export function clusterGateway(config: DispatcherConfig, read: (path: string) => string = (path) => readFileSync(path, 'utf8')): ClusterGateway | undefined {
  if (!config.TCAB_GATEWAY_URL) return undefined;
  const file = (variable: typeof GATEWAY_ENV.signingKeyFile | typeof GATEWAY_ENV.adminTokenFile): string => {
    const path = config[variable];
    if (!path) throw new InvalidInputError(variable, 'must name a file (the chart mounts the gateway auth Secret there)');
    let text: string;
    try {
      text = read(path).trim();
    } catch (error) {
      throw new InvalidInputError(variable, `cannot read ${path}: ${(error as Error).message}`);
    }
    if (!text) throw new InvalidInputError(variable, `${path} is empty`);
    return text;
  };
  const signingKey = signingKeyFrom(file(GATEWAY_ENV.signingKeyFile), GATEWAY_ENV.signingKeyFile);
  return { url: config.TCAB_GATEWAY_URL, signingKey, adminToken: file(GATEWAY_ENV.adminTokenFile) };
}
