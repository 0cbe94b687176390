// The chart's NATS auth values (nats.auth), rendered with the pinned helm: the bundled NATS runs `-c` its ConfigMap,
// which includes only the auth Secret's auth.conf key (never bundle.json, which holds the seeds); the dispatcher is
// told the Secret's name and may get that Secret by name and create Secrets (its key Secret on first start, one
// run credential per Run), nothing more; an operator's own NATS takes nats.auth.existingSecret; the combinations
// that could only fail at run time are refused at install with a message saying what to set. And the rendered
// nats.conf, with an auth.conf from nats/auth, runs a real nats-server that refuses a client without credentials.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { V1ConfigMap, V1Deployment, V1PolicyRule, V1Role, V1StatefulSet } from '@kubernetes/client-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { generateNatsAuth, mintDispatcherCredentials, parseNatsAuthBundle } from '../../nats/auth/index.ts';
import { connectNats, natsSettings } from '../../nats/settings.ts';
import { STREAM_NAME, ensureRunStream, runStreamConfig } from '../../nats/stream.ts';
import { dispatcherEnv, one, refused, render } from './chart-render.ts';
import type { Manifest } from './chart-render.ts';
import { freePort, natsServerBinary } from '../support/nats-server.ts';

const rulesOn = (resource: string) => (all: Manifest[]): V1PolicyRule[] => one<V1Role>(all, 'Role', 't-tcab-dispatcher')!.rules!.filter((r) => r.resources?.includes(resource));
const secretRules = rulesOn('secrets');
const serviceAccountRules = rulesOn('serviceaccounts');
const envSource = (all: Manifest[], name: string) => one<V1Deployment>(all, 'Deployment', 't-tcab-dispatcher')!.spec!.template.spec!.containers[0]!.env!.find((e) => e.name === name)?.valueFrom;

describe('charts/tcab nats.auth', () => {
  it('by default: the bundled NATS runs -c its ConfigMap, which includes auth.conf, the only key it mounts of the auth Secret', async () => {
    const all = await render();
    const conf = one<V1ConfigMap>(all, 'ConfigMap', 't-tcab-nats')!.data!['nats.conf']!;
    expect(conf).toMatch(/^port: 4222$/m);
    // Monitoring on loopback only (issue 33: run Pods read /connz, /jsz, /accountz on the Pod IP).
    expect(conf).toMatch(/^http: "127\.0\.0\.1:8222"$/m);
    expect(conf).not.toMatch(/http_port/);
    expect(conf).toMatch(/^jetstream \{ store_dir: \/data \}$/m);
    expect(conf).toMatch(/^include \.\/auth\.conf$/m);
    const pod = one<V1StatefulSet>(all, 'StatefulSet', 't-tcab-nats')!.spec!.template.spec!;
    expect(pod.containers[0]!.args).toEqual(['-c', '/etc/nats/nats.conf']);
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(pod.containers[0]!.volumeMounts).toContainEqual({ name: 'config', mountPath: '/etc/nats', readOnly: true });
    const sources = pod.volumes!.find((v) => v.name === 'config')!.projected!.sources!;
    expect(sources).toEqual([
      { configMap: { name: 't-tcab-nats', items: [{ key: 'nats.conf', path: 'nats.conf' }] } },
      { secret: { name: 't-tcab-nats-auth', items: [{ key: 'auth.conf', path: 'auth.conf' }] } },
    ]);
    // Nothing else in the chart mounts or names the Secret's other keys.
    expect(JSON.stringify(all)).not.toMatch(/bundle\.json|reader\.creds/);
  });

  it('by default: the dispatcher is told the auth Secret and its own ServiceAccount (the keys\' owner); it may get that Secret and that ServiceAccount by name and create Secrets; list, watch, update and delete stay out', async () => {
    const all = await render();
    expect(dispatcherEnv(all)).toMatchObject({ TCAB_NATS_URL: 'nats://t-tcab-nats.ns.svc:4222', TCAB_NATS_AUTH_SECRET: 't-tcab-nats-auth' });
    expect(dispatcherEnv(all)).not.toHaveProperty('TCAB_NATS_SECRET');
    expect(secretRules(all)).toEqual([
      { apiGroups: [''], resources: ['secrets'], resourceNames: ['t-tcab-nats-auth'], verbs: ['get'] },
      { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
    ]);
    expect(envSource(all, 'TCAB_SERVICE_ACCOUNT')).toEqual({ fieldRef: { fieldPath: 'spec.serviceAccountName' } });
    expect(serviceAccountRules(all)).toEqual([{ apiGroups: [''], resources: ['serviceaccounts'], resourceNames: ['t-tcab-dispatcher'], verbs: ['get'] }]);
  });

  it('an own NATS with nats.auth.existingSecret: no bundled server or config, the dispatcher uses that Secret', async () => {
    const all = await render('--set', 'nats.url=nats://nats.example:4222', '--set', 'nats.auth.existingSecret=tcab-nats-keys');
    expect(all.filter((m) => m.metadata.name.startsWith('t-tcab-nats'))).toEqual([]);
    expect(dispatcherEnv(all)).toMatchObject({ TCAB_NATS_URL: 'nats://nats.example:4222', TCAB_NATS_AUTH_SECRET: 'tcab-nats-keys' });
    expect(secretRules(all)[0]).toEqual({ apiGroups: [''], resources: ['secrets'], resourceNames: ['tcab-nats-keys'], verbs: ['get'] });
  });

  it('nats.auth.enabled=false: the bundled NATS without auth, no auth Secret anywhere, no Secret rules beyond the credentials ones', async () => {
    // Without the model gateway too, whose per-run token Secrets need a create rule of their own (chart-gateway.test.ts).
    const all = await render('--set', 'nats.auth.enabled=false', '--set', 'gateway.enabled=false');
    const conf = one<V1ConfigMap>(all, 'ConfigMap', 't-tcab-nats')!.data!['nats.conf']!;
    expect(conf).not.toContain('include');
    const sources = one<V1StatefulSet>(all, 'StatefulSet', 't-tcab-nats')!.spec!.template.spec!.volumes!.find((v) => v.name === 'config')!.projected!.sources!;
    expect(sources.map((s) => Object.keys(s)[0])).toEqual(['configMap']);
    expect(dispatcherEnv(all)).not.toHaveProperty('TCAB_NATS_AUTH_SECRET');
    expect(secretRules(all)).toEqual([]);
    expect(serviceAccountRules(all)).toEqual([]);
    expect(envSource(all, 'TCAB_SERVICE_ACCOUNT')).toBeUndefined();
    expect(JSON.stringify(all)).not.toContain('nats-auth');
  });

  it('refuses the values that could only fail at run time, saying what to set', async () => {
    expect(await refused('--set', 'nats.url=nats://nats.example:4222')).toMatch(/nats\.auth\.existingSecret.*nats\.auth\.enabled=false/);
    expect(await refused('--set', 'nats.credentialsSecret=nats-creds')).toMatch(/nats\.credentialsSecret .*nats\.auth\.enabled=false/);
    expect(await refused('--set', 'nats.auth.enabled=false', '--set', 'nats.auth.existingSecret=keys')).toContain('nats.auth.existingSecret needs nats.auth.enabled=true');
    expect(await refused('--set', 'nats.auth.enabled=yes')).toContain('/nats/auth/enabled');
    expect(await refused('--set', 'nats.auth.existingSecret=Not_A_Name')).toContain('/nats/auth/existingSecret');
  });

  it('the rendered nats.conf with an auth.conf from nats/auth runs a real nats-server: no credentials refused, the reader connects, the dispatcher has JetStream', async () => {
    const conf = one<V1ConfigMap>(await render(), 'ConfigMap', 't-tcab-nats')!.data!['nats.conf']!;
    const dir = mkdtempSync(join(tmpdir(), 'tcab-chart-nats-'));
    const [port, httpPort] = [await freePort(), await freePort()];
    // The Pod's paths and ports, moved to this test's directory and free loopback ports; nothing else changed.
    const local = conf.replace(/^port: 4222$/m, `port: ${port}`).replace(/^http: "127\.0\.0\.1:8222"$/m, `http: "127.0.0.1:${httpPort}"`).replace('store_dir: /data', `store_dir: ${JSON.stringify(join(dir, 'data'))}`);
    expect(local).toContain(`store_dir: ${JSON.stringify(join(dir, 'data'))}`);
    const secret = await generateNatsAuth({ resolverDir: join(dir, 'data', 'jwt') });
    writeFileSync(join(dir, 'nats.conf'), local);
    writeFileSync(join(dir, 'auth.conf'), secret['auth.conf']);
    const server = spawn(natsServerBinary(), ['-c', join(dir, 'nats.conf'), '-a', '127.0.0.1'], { stdio: ['ignore', 'ignore', 'pipe'] });
    try {
      await new Promise<void>((resolve, reject) => {
        let log = '';
        server.stderr!.on('data', (d: Buffer) => {
          log += d.toString();
          if (log.includes('Server is ready')) resolve();
        });
        server.once('exit', (code) => reject(new Error(`nats-server exited ${code}: ${log}`)));
      });
      const url = `nats://127.0.0.1:${port}`;
      await expect(connectNats(natsSettings(url), { name: 'anonymous' })).rejects.toThrow(/authorization violation/i);
      const reader = await connectNats(natsSettings(url, { credsText: secret['reader.creds'] }), { name: 'reader' });
      await reader.flush();
      await reader.close();
      const dispatcher = await connectNats(natsSettings(url, { credsText: (await mintDispatcherCredentials(parseNatsAuthBundle(secret['bundle.json']))).creds }), { name: 'dispatcher' });
      try {
        // What the dispatcher does first with JetStream: make the run stream (the account's JetStream is on).
        const jsm = await jetstreamManager(dispatcher);
        await ensureRunStream(jsm);
        expect((await jsm.streams.info(STREAM_NAME)).config.subjects).toEqual(runStreamConfig().subjects);
      } finally {
        await dispatcher.close();
      }
    } finally {
      if (server.exitCode === null) {
        const exited = new Promise((resolve) => server.once('exit', resolve));
        server.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
