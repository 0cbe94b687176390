// GET /api/console/runs/:namespace/:name/atif (issue 24): the run as an ATIF trajectory, read from its stream
// (replay until caught up) with the Run's own spec, so the prompt is in it (`tcab export atif` has only the
// stream). A run without a result yet gives the trajectory so far. Invalid messages stay in order as the
// `unknown` events they decode to; the trajectory counts them as left out.
import type { FastifyInstance } from 'fastify';
import { atifSpecOfRun, toAtif } from '../../export/atif/index.ts';
import type { HarnessEvent } from '../../shared/events.ts';
import type { RunResult } from '../../shared/run.ts';
import { clusterRunIdOf } from '../../shared/run-id.ts';
import type { ConsoleRun, ConsoleSources } from './sources.ts';
import type { ConsoleState } from './state.ts';

/** The Run once (the detail source's first answer), then unwatched. */
function runOnce(sources: ConsoleSources, namespace: string, name: string): Promise<ConsoleRun | undefined> {
  return new Promise((resolve) => {
    let done = false;
    const off = sources.runDetail.watch(namespace, name, (run) => {
      if (done) return;
      done = true;
      resolve(run);
      // The first answer may come before watch() returned: unwatch once it has.
      queueMicrotask(() => off());
    });
  });
}

/** Every stored message of the run, in stream order, until the replay caught up. */
async function replay(sources: ConsoleSources, runId: string): Promise<{ events: HarnessEvent[]; result?: RunResult }> {
  const events: HarnessEvent[] = [];
  let result: RunResult | undefined;
  const caughtUp = Promise.withResolvers<void>();
  const reading = await sources.feed!.open(runId, 0, {
    onEvents: (items) => events.push(...items.map((i) => i.event)),
    onResult: (_seq, r) => (result = r),
    onCaughtUp: caughtUp.resolve,
    onError: caughtUp.reject,
  });
  try {
    await caughtUp.promise;
  } finally {
    await reading.stop();
  }
  return { events, result };
}

export function registerAtifRoute(app: FastifyInstance, ready: Promise<ConsoleState>): void {
  app.get<{ Params: { namespace: string; name: string } }>('/api/console/runs/:namespace/:name/atif', async (req, reply) => {
    const { sources } = await ready;
    const { namespace, name } = req.params;
    const runId = clusterRunIdOf(namespace, name);
    if (!runId) return reply.code(404).send({ error: `${namespace}/${name} has no run id` });
    if (!sources.feed) return reply.code(503).send({ error: 'no NATS connection: the run stream cannot be read' });
    const run = await runOnce(sources, namespace, name);
    const { events, result } = await replay(sources, runId);
    if (!run && !result && events.length === 0) return reply.code(404).send({ error: `no Run ${namespace}/${name}` });
    const spec = run ? atifSpecOfRun(run.spec) : result && { harness: result.harness_slug, model: result.model };
    const trajectory = toAtif({ runId, events, result, spec });
    return reply.header('content-disposition', `attachment; filename="${runId}.atif.json"`).type('application/json; charset=utf-8').send(trajectory);
  });
}
