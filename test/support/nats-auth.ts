// A real nats-server in operator mode (nats/auth: one operator, TCAB with JetStream, SYS) and the identities the
// tests act as: the dispatcher (in-memory creds), a run's driver (a 0600 creds file and the inbox prefix, read
// from the environment as in a driver Pod), a reader. Helpers wait on the server's own signals, never on time.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { generateBundle } from '../../nats/auth/bundle.ts';
import type { NatsAuthBundle } from '../../nats/auth/bundle-schema.ts';
import { mintDispatcherCredentials, mintReaderCredentials, mintRunCredentials } from '../../nats/auth/mint.ts';
import { natsSettings, natsSettingsFromEnv } from '../../nats/settings.ts';
import type { NatsSettings } from '../../nats/settings.ts';
import type { HarnessEvent } from '../../shared/events.ts';
import type { RunResult } from '../../shared/run.ts';
import { NatsServer } from './nats-server.ts';

export class AuthNats {
  readonly server: NatsServer;
  readonly bundle: NatsAuthBundle;
  private readonly dir = mkdtempSync(join(tmpdir(), 'tcab-nats-creds-'));

  private constructor(server: NatsServer, bundle: NatsAuthBundle) {
    this.server = server;
    this.bundle = bundle;
  }

  static async start(): Promise<AuthNats> {
    const bundle = await generateBundle();
    return new AuthNats(await NatsServer.start({ auth: bundle }), bundle);
  }

  /** The dispatcher's settings: its credential minted in memory, as the dispatcher does. */
  async dispatcherSettings(): Promise<NatsSettings> {
    return natsSettings(this.server.url, { credsText: (await mintDispatcherCredentials(this.bundle)).creds });
  }

  /** A driver's settings as a driver Pod reads them: TCAB_NATS_CREDS (a 0600 file), TCAB_NATS_INBOX_PREFIX. */
  async runSettings(runId: string, expiresAt = new Date(Date.now() + 3600_000), mintedAt = new Date()): Promise<{ settings: NatsSettings; publicKey: string; creds: string }> {
    const minted = await mintRunCredentials(this.bundle, runId, expiresAt, mintedAt);
    const file = this.writeCreds(`${runId}.creds`, minted.creds);
    const settings = natsSettingsFromEnv({ TCAB_NATS_URL: this.server.url, TCAB_NATS_CREDS: file, TCAB_NATS_INBOX_PREFIX: minted.inboxPrefix })!;
    return { settings, publicKey: minted.publicKey, creds: minted.creds };
  }

  /** A reader's settings as `tcab events` reads them: only TCAB_NATS_CREDS (reader.ts sets the reader's inbox). */
  async readerSettings(): Promise<NatsSettings> {
    const file = this.writeCreds('reader.creds', (await mintReaderCredentials(this.bundle)).creds);
    return natsSettingsFromEnv({ TCAB_NATS_URL: this.server.url, TCAB_NATS_CREDS: file })!;
  }

  private writeCreds(name: string, creds: string): string {
    const file = join(this.dir, name);
    writeFileSync(file, creds, { mode: 0o600 });
    chmodSync(file, 0o600);
    return file;
  }

  async dispose(): Promise<void> {
    await this.server.dispose();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * The next error the server reports on this connection (a permission violation, an expired or revoked
 * credential): start waiting BEFORE the action that causes it.
 */
export function nextServerError(nc: NatsConnection): Promise<string> {
  const status = nc.status();
  return (async () => {
    for await (const s of status) if (s.type === 'error') return String(s.error.message);
    return 'connection closed without an error';
  })();
}

/** The error a promise rejects with, as its message (fails if it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected a rejection, but it resolved');
}

export const agentEvent = (text: string): HarnessEvent => ({ type: 'agent', timestamp: new Date().toISOString(), message: text });
export const startEvent = (status: 'started' | 'completed' = 'completed'): HarnessEvent => ({ type: 'system', timestamp: new Date().toISOString(), stage: 'start_container', status, message: `start_container ${status}` });

export const runResult = (runId: string, message: string, eventCount: number): RunResult => ({
  run_id: runId, harness_slug: 'gg', harness_version: null, model: 'm', canonical_model: null, outcome: 'succeeded', message,
  auth_mode: 'api-key', sessions: [], session_ids: [], exit_code: 0, stages: [], tokens: null, raw_usage: null, reported_cost_usd: null,
  actual_cost_usd: null, comparable_cost_usd: null, catalog_version: null, cost_warnings: [], started_at: new Date().toISOString(),
  finished_at: new Date().toISOString(), event_count: eventCount,
});
