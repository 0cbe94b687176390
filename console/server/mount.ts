// One call for whoever serves the console (the dispatcher, `tcab console`, tests, the bench): register the routes
// on the app at once (before listen), start the state when the sources are there, and a stop for shutdown. The app
// must have read authentication installed (read-auth.ts; buildApi does it): the routes refuse to mount without.
import type { FastifyInstance } from 'fastify';
import { hasReadAuth } from './read-auth.ts';
import { registerConsole } from './routes.ts';
import type { ConsoleSources } from './sources.ts';
import { ConsoleState } from './state.ts';

export interface MountedConsole {
  /** Resolves once the state has its initial rows (and the activity consumer runs). */
  started: Promise<void>;
  stop(): Promise<void>;
}

export interface MountOptions {
  /** The sources, or a promise of them (the dispatcher's exist only after its first NATS connect). */
  sources: ConsoleSources | Promise<ConsoleSources>;
  token: () => string;
  stalledAfterSeconds?: number;
  /** The streams' keep-alive and credential re-check period (default sse.ts HEARTBEAT_MS). */
  heartbeatMs?: number;
}

export function mountConsole(app: FastifyInstance, options: MountOptions): MountedConsole {
  if (!hasReadAuth(app)) throw new Error('the console needs read authentication on its app: call installReadAuth (or build it with buildApi) first');
  let stopped = false;
  let state: ConsoleState | undefined;
  const ready = Promise.resolve(options.sources).then(async (sources) => {
    state = new ConsoleState(sources);
    await state.start();
    if (stopped) await state.stop();
    return state;
  });
  registerConsole(app, { state: ready, token: options.token, stalledAfterSeconds: options.stalledAfterSeconds, heartbeatMs: options.heartbeatMs });
  return {
    started: ready.then(() => undefined),
    stop: async () => {
      stopped = true;
      await state?.stop();
    },
  };
}
