// The dispatcher's HTTP API (spec: "Per-harness configuration"): GET /harness-config reads every harness (catalogue
// + gg) with its config or defaults and needs a read credential like every data read (issue 33; read-auth.ts);
// POST /harness-config/{slug} changes it and needs the write token. Plus /healthz and /readyz (caches synced, NATS
// connected; leadership reported), open for the kubelet's probes. /metrics is on a port of its own (metrics.ts).
// Bodies are validated with the shared schema.
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import { DEFAULT_HARNESS_CONFIG, HarnessConfigSpec } from '../../shared/harness-config.ts';
import { formatIssues } from '../../shared/zod-issues.ts';
import { bearerOf, tokenMatches } from '../../shared/bearer-token.ts';
import { PUBLIC_ROUTE, installReadAuth } from '../server/read-auth.ts';
import type { ReadAuthOptions } from '../server/read-auth.ts';

export interface HarnessConfigStore {
  /** Stored configs by slug (absent slug = defaults). */
  list(): Promise<ReadonlyMap<string, HarnessConfigSpec>>;
  set(slug: string, spec: HarnessConfigSpec): Promise<void>;
}

export interface ApiOptions {
  store: HarnessConfigStore;
  /** Every harness slug the registry knows: unknown slugs are 404. */
  slugs: () => readonly string[];
  /** The write token, asked per request (the Secret's file may be rotated). */
  token: () => string;
  /** Who may read (the write token always may). */
  readAuth: Omit<ReadAuthOptions, 'writeToken'>;
  /** What /readyz reports, asked per request. */
  readiness: () => ReadinessInputs;
}

export interface ReadinessInputs {
  /** Every informer's initial list done and its watch running. */
  informersSynced: boolean;
  natsConnected: boolean;
  /** Whether this replica holds the Lease: reported, not required (a warm follower is ready to take over). */
  leader: boolean;
}

/**
 * Ready = caches synced and NATS connected. Leadership is in the body only: a follower with warm caches serves the
 * API and is the standby the Service may route to; requiring leadership would make every follower unready.
 */
export function readinessReport(inputs: ReadinessInputs) {
  return {
    ready: inputs.informersSynced && inputs.natsConnected,
    informers: inputs.informersSynced ? ('synced' as const) : ('syncing' as const),
    nats: inputs.natsConnected ? ('connected' as const) : ('disconnected' as const),
    role: inputs.leader ? ('leader' as const) : ('follower' as const),
  };
}

export { tokenMatches };

export function buildApi(options: ApiOptions): FastifyInstance {
  const app = Fastify({ logger: false, bodyLimit: 16 * 1024 });
  installReadAuth(app, { ...options.readAuth, writeToken: options.token });

  app.get('/healthz', PUBLIC_ROUTE, async () => ({ ok: true }));
  app.get('/readyz', PUBLIC_ROUTE, async (_req, reply) => {
    const report = readinessReport(options.readiness());
    return reply.code(report.ready ? 200 : 503).send(report);
  });

  app.get('/harness-config', async () => {
    const stored = await options.store.list();
    return options.slugs().map((slug) => ({ slug, ...(stored.get(slug) ?? DEFAULT_HARNESS_CONFIG), default: !stored.has(slug) }));
  });

  app.post<{ Params: { slug: string } }>('/harness-config/:slug', async (req, reply) => {
    if (!tokenMatches(bearerOf(req.headers.authorization), options.token())) return reply.code(401).header('www-authenticate', 'Bearer').send({ error: 'a valid bearer token is required' });
    const { slug } = req.params;
    if (!options.slugs().includes(slug)) return reply.code(404).send({ error: `unknown harness "${slug}"` });
    const parsed = HarnessConfigSpec.safeParse(req.body);
    if (!parsed.success) return reply.code(400).send({ error: formatIssues(parsed.error) });
    await options.store.set(slug, parsed.data);
    return { slug, ...parsed.data, default: false };
  });

  return app;
}

/**
 * Stops serving: idle keep-alive connections close at once (fastify's default), a request in flight gets `graceMs`
 * to finish, then every connection is cut. fastify's close() alone waits for the requests in flight, and a client
 * that never finishes sending one (or a slow scrape) held the dispatcher's SIGTERM path until the kubelet's SIGKILL.
 */
export async function closeApi(app: FastifyInstance, graceMs: number): Promise<void> {
  const closing = app.close();
  const timer = setTimeout(() => app.server.closeAllConnections(), graceMs);
  try {
    await closing;
  } finally {
    clearTimeout(timer);
  }
}
