// The adversarial agent's own NATS client (test/cluster/adversary-attempts.ts nats-probe.mjs), run as the agent runs
// it (sh on the Run's workspace files, node with no node_modules), against real nats-servers: the control that makes
// the e2e's refusals mean something. With no authentication its lines are genuinely accepted (a subscriber gets
// its publish, the server answers +OK and PONG); with the chart's operator-mode authentication the server answers
// only -ERR 'Authorization Violation', closes the connection, and no message reaches even a subscriber of all runs.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { adversaryFiles, natsAttempts, pub, reportsOf } from '../cluster/adversary-attempts.ts';
import { connectNats, natsSettings } from '../../nats/settings.ts';
import { AuthNats } from './nats-auth.ts';
import { NatsServer } from './nats-server.ts';

const workspaces: string[] = [];
afterAll(() => {
  for (const dir of workspaces) rmSync(dir, { recursive: true, force: true });
});

/** The agent's attempts against a server, as its shell runs them in the workspace: each attempt's report. */
async function probe(url: string, lines: string[]): Promise<Record<string, string>> {
  const { hostname, port } = new URL(url);
  const workspace = mkdtempSync(join(tmpdir(), 'tcab-adversary-'));
  workspaces.push(workspace);
  for (const file of adversaryFiles(natsAttempts({ host: hostname, port: Number(port), attempts: { probe: lines } }))) {
    mkdirSync(dirname(join(workspace, file.path)), { recursive: true });
    writeFileSync(join(workspace, file.path), file.content);
  }
  const { stdout } = await promisify(execFile)('sh', ['.adversary/attempts.sh'], { cwd: workspace, env: { PATH: process.env.PATH } });
  return Object.fromEntries(reportsOf(stdout).get('probe') ?? []);
}

/** What a subscriber of every run got before a marker the test publishes after the probe: in order, so complete. */
async function receivedBefore(nc: NatsConnection, sub: Subscription): Promise<string[]> {
  const got: string[] = [];
  nc.publish('tcab.run.marker.event.agent', 'marker');
  for await (const m of sub) {
    if (m.string() === 'marker') return got;
    got.push(`${m.subject} ${m.string()}`);
  }
  return got;
}

const LINES = [...pub('tcab.run.other.result', '{"outcome":"succeeded"}'), 'SUB tcab.run.> 1'];

describe('the adversarial agent\'s NATS client (nats-probe.mjs)', () => {
  it('with no authentication: its publish is delivered and the server acknowledges every line (the probe can succeed)', async () => {
    const nats = await NatsServer.start();
    try {
      const nc = await connectNats(natsSettings(nats.url), { name: 'observer' });
      const sub = nc.subscribe('tcab.run.>');
      await nc.flush();
      const report = await probe(nats.url, LINES);
      expect(report).toMatchObject({ 'probe.authRequired': 'false', 'probe.sent': 'true', 'probe.closedBy': 'agent' });
      expect(report['probe.replies']).toMatch(/^\+OK \| \+OK \| \+OK \| PONG\b/); // CONNECT, PUB, SUB, then PING
      expect(await receivedBefore(nc, sub)).toEqual(['tcab.run.other.result {"outcome":"succeeded"}']);
      await nc.close();
    } finally {
      await nats.dispose();
    }
  });

  it('with the chart\'s authentication and no credential: refused and closed by the server; nothing published', async () => {
    const nats = await AuthNats.start();
    try {
      const nc = await connectNats(await nats.dispatcherSettings(), { name: 'observer' });
      const sub = nc.subscribe('tcab.run.>');
      await nc.flush();
      const { 'probe.socketError': socketError, ...report } = await probe(nats.server.url, LINES);
      expect([undefined, 'ECONNRESET']).toContain(socketError);
      expect(report).toEqual({ 'probe.authRequired': 'true', 'probe.sent': 'true', 'probe.replies': "-ERR 'Authorization Violation'", 'probe.closedBy': 'server' });
      expect(await receivedBefore(nc, sub)).toEqual([]);
      await nc.close();
    } finally {
      await nats.dispose();
    }
  });
});
