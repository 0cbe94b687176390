// How every component reaches NATS: one settings schema, read from the same environment variables by the driver,
// the dispatcher and `tcab`, and one connect with one reconnect policy. A component that takes a server from a flag
// (`tcab run --nats`, `tcab events --nats`) builds the same settings with that list in place of TCAB_NATS_URL.
//
// Reconnect policy (all components): after the first connection, the client reconnects forever, every 250 ms plus
// nats.js's jitter; publishes and requests fail meanwhile and their callers retry (the driver's pump resends from the
// first unacknowledged message; Nats-Msg-Id drops the copies that had landed). The first connection is not
// retried here: each caller decides (the driver's sink retries until the run's deadline, the dispatcher exits and
// its Pod restarts, `tcab events` exits 3). A server that accepts TCP but never answers fails the handshake in 2 s.
// A server that goes silent on an open connection (its node lost: no FIN, no RST) is noticed by pings: one every
// PING_INTERVAL_MS, the connection given up after MAX_PINGS_OUT unanswered, then the client reconnects to another
// server of the cluster. nats.js's default (2 minutes, 2 pings) left the dispatcher's requests timing out for
// minutes after a node died in the three-node test (test/cluster/multi-node.test.ts), its drivers' results unread.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { connect, credsAuthenticator } from '@nats-io/transport-node';
import type { ConnectionOptions, NatsConnection } from '@nats-io/transport-node';
import { InvalidInputError } from '../shared/errors.ts';
import { formatIssues } from '../shared/zod-issues.ts';
import { serverCredentials } from './server-urls.ts';

const text = z.string().min(1);

export const NatsSettings = z.strictObject({
  /** Seeds of one NATS cluster (or one server); URL syntax is judged by nats.js when connecting. */
  servers: z.array(z.string().trim().min(1, 'an empty server URL')).min(1, 'at least one server URL'),
  user: text.optional(),
  pass: text.optional(),
  token: text.optional(),
  /** A .creds file (user JWT + NKey seed), read at every (re)connect so a rotated file is picked up. */
  credsFile: text.optional(),
  /** PEM file of the CA that signed the servers' certificates; set, the connection requires TLS. */
  caFile: text.optional(),
  /**
   * The prefix of this client's reply subjects (nats.js `inboxPrefix`; default `_INBOX`). A run's driver must use
   * `_INBOX_<run>` and a reader `_TCAB_READER_INBOX` (nats/auth/permissions.ts): their credentials may subscribe to
   * nothing else. One subject token or more, no wildcard, no space.
   */
  inboxPrefix: z.string().regex(/^[^\s*>.]+(\.[^\s*>.]+)*$/, 'subject tokens without wildcards or spaces').optional(),
  /**
   * A .creds TEXT (not a path): the dispatcher's identities, minted in memory and never written to disk. Never
   * read from the environment. Wins over credsFile.
   */
  credsText: text.optional(),
});
export type NatsSettings = z.infer<typeof NatsSettings>;

/** Which environment variable holds each setting (errors name the variable, not the field). */
export const NATS_ENV = {
  servers: 'TCAB_NATS_URL',
  user: 'TCAB_NATS_USER',
  pass: 'TCAB_NATS_PASSWORD',
  token: 'TCAB_NATS_TOKEN',
  credsFile: 'TCAB_NATS_CREDS',
  caFile: 'TCAB_NATS_CA',
  inboxPrefix: 'TCAB_NATS_INBOX_PREFIX',
} as const satisfies Record<Exclude<keyof NatsSettings, 'credsText'>, string>;

type Env = Readonly<Record<string, string | undefined>>;

/**
 * The settings from the environment, or undefined when TCAB_NATS_URL is unset or empty (no NATS: the driver only
 * prints). `servers` (a comma-separated list) replaces TCAB_NATS_URL when a flag gave it (`serversFrom` names the
 * flag in errors). An empty variable counts
 * as unset, as a Secret key marked optional leaves it. Throws InvalidInputError naming the variable.
 */
export function natsSettingsFromEnv(env: Env, servers = env[NATS_ENV.servers], serversFrom: string = NATS_ENV.servers): NatsSettings | undefined {
  if (!servers) return undefined;
  const value = (name: string) => env[name] || undefined;
  const candidate = {
    servers: servers.split(',').map((s) => s.trim()),
    user: value(NATS_ENV.user),
    pass: value(NATS_ENV.pass),
    token: value(NATS_ENV.token),
    credsFile: value(NATS_ENV.credsFile),
    caFile: value(NATS_ENV.caFile),
    inboxPrefix: value(NATS_ENV.inboxPrefix),
  };
  const parsed = NatsSettings.safeParse(candidate);
  if (parsed.success) return parsed.data;
  const field = parsed.error.issues[0]?.path[0] as keyof NatsSettings | undefined;
  throw new InvalidInputError(field === 'servers' ? serversFrom : field && field !== 'credsText' ? NATS_ENV[field] : 'NATS settings', formatIssues(parsed.error, '', { maxIssues: 3 }).replace(/^[^:]*: /, ''));
}

/** The settings for one server list given as a flag or in a test (no credentials). */
export function natsSettings(servers: string | readonly string[], rest: Omit<Partial<NatsSettings>, 'servers'> = {}): NatsSettings {
  return NatsSettings.parse({ servers: typeof servers === 'string' ? servers.split(',').map((s) => s.trim()) : [...servers], ...rest });
}

/** The NKey seed lines of a .creds text (the secret part; the JWT is signed but public). */
function credsSeeds(creds: string | undefined): string[] {
  return creds ? [...creds.matchAll(/\bS[A-Z][A-Z2-7]{56}\b/g)].map((m) => m[0]) : [];
}

/** Every secret the settings carry (for the driver's scrubber and error texts): password, token, URL credentials, seed. */
export function natsSecrets(settings: NatsSettings): string[] {
  return [settings.pass, settings.token, ...serverCredentials(settings.servers), ...credsSeeds(settings.credsText)].filter((s): s is string => Boolean(s));
}

export const PING_INTERVAL_MS = 5_000;
export const MAX_PINGS_OUT = 2;

export interface ConnectOptions {
  /** The client name the server shows (`nats server report connections`): tcab-driver, tcab-dispatcher, tcab-events. */
  name: string;
  /**
   * Keep retrying the first connect (same policy as reconnects) instead of failing: the dispatcher, whose bundled
   * NATS cannot start until the dispatcher has created its auth Secret; a failed first connect used to restart it.
   */
  waitOnFirstConnect?: boolean;
}

/** The nats.js options for the settings (the policy above); exported for the tests that check it. */
export function connectionOptions(settings: NatsSettings, { name, waitOnFirstConnect }: ConnectOptions): ConnectionOptions {
  const { servers, user, pass, token, credsFile, caFile, inboxPrefix, credsText } = settings;
  return {
    servers,
    user,
    pass,
    token,
    authenticator: credsText ? credsAuthenticator(new TextEncoder().encode(credsText)) : credsFile ? credsAuthenticator(() => readFileSync(credsFile)) : undefined,
    inboxPrefix,
    tls: caFile ? { caFile } : undefined,
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    timeout: 2000,
    pingInterval: PING_INTERVAL_MS,
    maxPingOut: MAX_PINGS_OUT,
    ...(waitOnFirstConnect ? { waitOnFirstConnect } : {}),
  };
}

export function connectNats(settings: NatsSettings, options: ConnectOptions): Promise<NatsConnection> {
  return connect(connectionOptions(settings, options));
}
