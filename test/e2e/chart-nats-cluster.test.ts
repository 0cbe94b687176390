// The chart's bundled NATS as a JetStream cluster (nats.bundled.replicas 3, issue 35), rendered with the pinned helm:
// the servers name themselves after their Pods and route to each other's stable names; they start together, one per
// node where possible, a drain takes one at a time; only they reach each other's route port; the dispatcher keeps the
// run stream on 3 of them. And the rendered config runs as a real cluster of 3 nats-servers on loopback with the
// install's JWT auth: the dispatcher scales a stream a driver made first to 3 replicas; the server leading the stream
// is SIGKILLed while a driver's sink publishes a run into it, and the run's stream comes out whole: every event once,
// in order, and its result.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { V1ConfigMap, V1NetworkPolicy, V1PodDisruptionBudget, V1Service, V1StatefulSet } from '@kubernetes/client-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { generateNatsAuth, mintDispatcherCredentials, mintRunCredentials, parseNatsAuthBundle, renderAuthConf } from '../../nats/auth/index.ts';
import { connectNats, natsSettings } from '../../nats/settings.ts';
import type { NatsSettings } from '../../nats/settings.ts';
import { STREAM_NAME, ensureRunStream } from '../../nats/stream.ts';
import { readRunStream } from '../../nats/reader.ts';
import { RunStream } from '../../nats/result-consumer.ts';
import type { StreamItem } from '../../nats/reader.ts';
import { NatsSink } from '../../driver/sinks/nats.ts';
import type { RunResult } from '../../shared/run.ts';
import { dispatcherEnv, one, refused, render } from './chart-render.ts';
import { freePort, natsServerBinary } from '../support/nats-server.ts';

const NAMES = ['t-tcab-nats-0', 't-tcab-nats-1', 't-tcab-nats-2'];

describe('charts/tcab nats.bundled.replicas 3', () => {
  it('renders a 3-server JetStream cluster: stable names and routes, Parallel start, spread over nodes, a PDB, routes from its own servers only, stream replicas 3', async () => {
    const all = await render('--set', 'nats.bundled.replicas=3');
    const conf = one<V1ConfigMap>(all, 'ConfigMap', 't-tcab-nats')!.data!['nats.conf']!;
    expect(conf).toMatch(/^server_name: \$POD_NAME$/m);
    expect(conf).toMatch(/^cluster \{\n {2}name: t-tcab-nats\n {2}port: 6222\n/m);
    for (const name of NAMES) expect(conf).toContain(`nats://${name}.t-tcab-nats-cluster.ns.svc:6222`);
    const sts = one<V1StatefulSet>(all, 'StatefulSet', 't-tcab-nats')!.spec!;
    expect(sts).toMatchObject({ replicas: 3, serviceName: 't-tcab-nats-cluster', podManagementPolicy: 'Parallel' });
    expect(sts.template.spec!.affinity!.podAntiAffinity!.preferredDuringSchedulingIgnoredDuringExecution![0]!.podAffinityTerm.topologyKey).toBe('kubernetes.io/hostname');
    expect(sts.template.spec!.containers[0]!.env).toEqual([{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }]);
    expect(one<V1Service>(all, 'Service', 't-tcab-nats-cluster')!.spec).toMatchObject({ clusterIP: 'None', publishNotReadyAddresses: true });
    expect(one<V1PodDisruptionBudget>(all, 'PodDisruptionBudget', 't-tcab-nats')!.spec!.maxUnavailable).toBe(1);
    const ingress = one<V1NetworkPolicy>(all, 'NetworkPolicy', 't-tcab-nats')!.spec!.ingress!;
    expect(ingress.find((r) => r.ports?.[0]?.port === 6222)).toEqual({ from: [{ podSelector: { matchLabels: { 'app.kubernetes.io/instance': 't', 'app.kubernetes.io/component': 'nats' } } }], ports: [{ protocol: 'TCP', port: 6222 }] });
    expect(dispatcherEnv(all).TCAB_NATS_STREAM_REPLICAS).toBe('3');
  });

  it('one server by default keeps the shape it always had (no cluster, no headless Service or PDB, stream replicas 1); 2 servers are refused', async () => {
    const all = await render();
    const conf = one<V1ConfigMap>(all, 'ConfigMap', 't-tcab-nats')!.data!['nats.conf']!;
    expect(conf).not.toMatch(/^(cluster \{|server_name)/m);
    expect(one<V1StatefulSet>(all, 'StatefulSet', 't-tcab-nats')!.spec).toMatchObject({ replicas: 1, serviceName: 't-tcab-nats' });
    expect(one<V1StatefulSet>(all, 'StatefulSet', 't-tcab-nats')!.spec!.podManagementPolicy).toBeUndefined();
    expect(one(all, 'Service', 't-tcab-nats-cluster')).toBeUndefined();
    expect(one(all, 'PodDisruptionBudget', 't-tcab-nats')).toBeUndefined();
    expect(dispatcherEnv(all).TCAB_NATS_STREAM_REPLICAS).toBe('1');
    expect(await refused('--set', 'nats.bundled.replicas=2')).toContain('/nats/bundled/replicas');
    expect(dispatcherEnv(await render('--set', 'nats.auth.enabled=false', '--set', 'nats.url=nats://mine:4222', '--set', 'nats.bundled.enabled=false', '--set', 'nats.streamReplicas=3')).TCAB_NATS_STREAM_REPLICAS).toBe('3');
  });

  describe('the rendered config as a real cluster of 3 nats-servers', () => {
    const servers: { name: string; client: number; process?: ChildProcess; dir: string }[] = [];
    let dir: string;
    afterAll(async () => {
      for (const s of servers) if (s.process && s.process.exitCode === null) s.process.kill('SIGKILL');
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    async function start(index: number, conf: string): Promise<void> {
      const server = servers[index]!;
      writeFileSync(join(server.dir, 'nats.conf'), conf);
      // POD_NAME as the chart's Pod gets it (the downward API): the server's name.
      const child = spawn(natsServerBinary(), ['-c', join(server.dir, 'nats.conf'), '-a', '127.0.0.1'], { env: { PATH: process.env.PATH, POD_NAME: server.name }, stdio: ['ignore', 'ignore', 'pipe'] });
      server.process = child;
      await new Promise<void>((resolve, reject) => {
        let log = '';
        child.stderr!.on('data', (d: Buffer) => {
          log += d.toString();
          if (log.includes('Server is ready')) resolve();
        });
        child.once('exit', (code) => reject(new Error(`nats-server ${server.name} exited ${code}: ${log}`)));
      });
    }

    it('a stream a driver made is scaled to 3 by the dispatcher; its leader SIGKILLed while a driver publishes a run, the run comes out whole', async () => {
      dir = mkdtempSync(join(tmpdir(), 'tcab-nats-cluster-'));
      const conf = one<V1ConfigMap>(await render('--set', 'nats.bundled.replicas=3'), 'ConfigMap', 't-tcab-nats')!.data!['nats.conf']!;
      const secret = await generateNatsAuth();
      const bundle = parseNatsAuthBundle(secret['bundle.json']);
      const ports = await Promise.all(NAMES.map(async () => ({ client: await freePort(), route: await freePort(), http: await freePort() })));
      // Each server: the Pod's ports, paths and peers' DNS names moved to loopback and this test's directory.
      const local = (i: number) => {
        const d = join(dir, NAMES[i]!);
        let text = conf
          .replace(/^port: 4222$/m, `port: ${ports[i]!.client}`)
          .replace(/^ {2}port: 6222$/m, `  port: ${ports[i]!.route}`)
          .replace(/^http: "127\.0\.0\.1:8222"$/m, `http: "127.0.0.1:${ports[i]!.http}"`)
          .replace('store_dir: /data', `store_dir: ${JSON.stringify(join(d, 'data'))}`);
        NAMES.forEach((name, j) => (text = text.replace(`nats://${name}.t-tcab-nats-cluster.ns.svc:6222`, `nats://127.0.0.1:${ports[j]!.route}`)));
        expect(text).not.toContain('svc:6222');
        return { d, text };
      };
      for (const [i, name] of NAMES.entries()) {
        const { d } = local(i);
        servers.push({ name, client: ports[i]!.client, dir: d });
        mkdirSync(d, { recursive: true });
        // Public keys and JWTs, as the auth Secret's auth.conf; the resolver's directory on this server's store.
        writeFileSync(join(d, 'auth.conf'), renderAuthConf(bundle, join(d, 'data', 'jwt')));
      }
      // One server first: alone it has no JetStream (no meta leader without a quorum of 2), as while an install starts.
      await start(0, local(0).text);
      const urls = servers.map((s) => `nats://127.0.0.1:${s.client}`);
      const as = (creds: string): NatsSettings => natsSettings(urls, { credsText: creds });
      const dispatcherCreds = (await mintDispatcherCredentials(bundle)).creds;
      // The dispatcher's start meets that and tries again (it used to exit); the other two servers start at its first
      // retry, and its stream setup then goes through.
      const retried: string[] = [];
      let others: Promise<unknown> | undefined;
      const starting = await RunStream.connect(as(dispatcherCreds), {
        onStreamRetry: (error) => {
          retried.push(error.message);
          others ??= Promise.all([1, 2].map((i) => start(i, local(i).text)));
        },
      });
      await others;
      await starting.close(2000);
      expect(retried.length).toBeGreaterThan(0);
      expect(retried.every((m) => /temporarily unavailable|^timeout$/i.test(m)), retried.join('; ')).toBe(true);

      // That first start asked for no replicas (as a driver or a reader making the stream would): 1. Now scaled to 3.
      const nc = await connectNats(as(dispatcherCreds), { name: 'dispatcher' });
      try {
        // Until the servers have formed the cluster and elected JetStream's leader (the account's JetStream answers).
        const jsm = await vi.waitFor(async () => {
          const manager = await jetstreamManager(nc, { timeout: 2000 });
          await ensureRunStream(manager);
          return manager;
        }, { timeout: 60_000, interval: 500 });
        expect((await jsm.streams.info(STREAM_NAME)).config.num_replicas).toBe(1);
        await ensureRunStream(jsm, undefined, 3);
        await vi.waitFor(async () => {
          const info = await jsm.streams.info(STREAM_NAME);
          expect(info.config.num_replicas).toBe(3);
          expect(info.cluster?.replicas?.filter((r) => r.current)).toHaveLength(2);
        }, { timeout: 60_000, interval: 500 });
      } finally {
        await nc.close();
      }

      // A driver publishes a run; half way, the server leading the stream is killed outright.
      const runId = 'ns_cluster-run';
      const run = await mintRunCredentials(bundle, runId, new Date(Date.now() + 3600_000));
      const sink = new NatsSink({ settings: natsSettings(urls, { credsText: run.creds, inboxPrefix: run.inboxPrefix }), deliverBy: Date.now() + 120_000, attempt: 'uid-1', attemptNumber: 1 });
      const EVENTS = 400;
      const at = (i: number) => new Date(Date.UTC(2026, 11, 6, 12, 0, 0, i)).toISOString();
      for (let i = 1; i <= EVENTS / 2; i++) sink.event({ runId, seq: i, event: { type: 'agent', timestamp: at(i), message: `event ${i}` } });
      const watcher = await connectNats(as(dispatcherCreds), { name: 'watcher' });
      const leader = (await (await jetstreamManager(watcher)).streams.info(STREAM_NAME)).cluster!.leader!;
      await watcher.close();
      const killed = servers.find((s) => s.name === leader)!;
      killed.process!.kill('SIGKILL');
      for (let i = EVENTS / 2 + 1; i <= EVENTS; i++) sink.event({ runId, seq: i, event: { type: 'agent', timestamp: at(i), message: `event ${i}` } });
      const result: RunResult = {
        run_id: runId, harness_slug: 'gg', harness_version: '1', model: 'm', canonical_model: null, outcome: 'succeeded', message: 'ok', auth_mode: 'api-key',
        sessions: [], session_ids: [], exit_code: 0, stages: [], tokens: null, raw_usage: null, reported_cost_usd: null, actual_cost_usd: null, comparable_cost_usd: null,
        catalog_version: null, cost_warnings: [], started_at: at(0), finished_at: at(EVENTS + 1), event_count: EVENTS, attempt: { number: 1, of: 3 },
      };
      sink.result(result);
      await sink.close();
      expect(sink.stats.undelivered).toBe(0);

      // Read from the survivors: every event once, in order, and one result.
      const survivors = servers.filter((s) => s !== killed).map((s) => `nats://127.0.0.1:${s.client}`);
      const items: StreamItem[] = [];
      for await (const item of readRunStream({ settings: natsSettings(survivors, { credsText: secret['reader.creds'] }), runId, replay: true, untilResult: true })) items.push(item);
      expect(items.filter((i) => i.kind === 'event').map((i) => (i.kind === 'event' ? [i.seq, i.attempt] : []))).toEqual(Array.from({ length: EVENTS }, (_, k) => [k + 1, 1]));
      expect(items.filter((i) => i.kind === 'result')).toHaveLength(1);

      // The killed server comes back, catches up, and the stream is on 3 again under some leader.
      await start(servers.indexOf(killed), local(servers.indexOf(killed)).text);
      const back = await connectNats(as(dispatcherCreds), { name: 'back' });
      try {
        await vi.waitFor(async () => {
          const info = await (await jetstreamManager(back)).streams.info(STREAM_NAME);
          expect(NAMES).toContain(info.cluster?.leader);
          expect(info.cluster?.replicas?.every((r) => r.current)).toBe(true);
          expect(info.state.messages).toBe(EVENTS + 1);
        }, { timeout: 60_000, interval: 500 });
      } finally {
        await back.close();
      }
      process.stderr.write(`chart nats cluster: ${EVENTS} events + result published across a SIGKILL of stream leader ${leader}: 0 lost, 0 duplicated\n`);
    }, 240_000);
  });
});
