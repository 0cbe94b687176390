// GET /metrics (Prometheus) on a port of its own (issue 33; the chart's dispatcher.metrics.port, 9090): the API port
// now needs a read credential for data, and a scraper should need none, so the counters live where only what the
// NetworkPolicies admit (Prometheus) can reach them. Nothing else is served here: no Run data, no token.
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';

export function buildMetricsServer(registry: Registry): FastifyInstance {
  const app = Fastify({ logger: false, bodyLimit: 1024 });
  app.get('/metrics', async (_req, reply) => reply.type(registry.contentType).send(await registry.metrics()));
  return app;
}
