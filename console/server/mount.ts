// One call for whoever serves the console (the dispatcher, `tcab console`, tests, the bench): start the state from
// the sources, register the routes on the app, and a stop for shutdown.
import type { FastifyInstance } from 'fastify';
import { registerConsole } from './routes.ts';
import type { ConsoleSources } from './sources.ts';
import { ConsoleState } from './state.ts';

export interface MountedConsole {
  state: ConsoleState;
  stop(): Promise<void>;
}

/** Registers the routes at once (before app.listen/ready); the state fills as the sources deliver. */
export function mountConsole(app: FastifyInstance, options: { sources: ConsoleSources; token: () => string; stalledAfterSeconds?: number }): MountedConsole & { started: Promise<void> } {
  const state = new ConsoleState(options.sources);
  registerConsole(app, { state, sources: options.sources, token: options.token, stalledAfterSeconds: options.stalledAfterSeconds });
  const started = state.start();
  return { state, started, stop: () => state.stop() };
}
