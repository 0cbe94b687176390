import { describe, expect, it } from 'vitest';
import { fc, test } from '@fast-check/vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { EgressConfig } from '../../shared/egress.ts';
import { RunSpec } from '../../shared/run.ts';
import { dispatcherConfig } from '../config.ts';
import { NO_DNS, buildDriverPod } from './driver-pod.ts';
import { EGRESS_LABEL, decideEgress, egressOfPod, hostAliasesOf, installHostsOf, matchesNoProxy, namesToResolve, proxyEnv } from './egress.ts';
import { EGRESS_ANNOTATION } from '../../kube/resources.ts';
import { hostAllowed } from '../../shared/egress.ts';
import { HostResolver } from './host-resolver.ts';

const PROXY = 'http://tcab-tcab-egress.evals.svc:3128';
const egress = EgressConfig.parse({
  defaultProfile: 'registries',
  profiles: {
    none: { proxy: 'http://tcab-tcab-egress.evals.svc:3130', hosts: ['api.anthropic.com'] },
    registries: { proxy: PROXY, hosts: ['registry.npmjs.org', '.githubusercontent.com', 'api.anthropic.com'] },
    open: { proxy: 'http://tcab-tcab-egress.evals.svc:3129', hosts: ['*'] },
  },
  noProxy: ['.svc', '.svc.cluster.local', '.cluster.local', 'localhost', '127.0.0.1'],
});
const spec = (egressName?: string) => RunSpec.parse({ harness: 'gg', model: 'm', prompt: 'p', ...(egressName ? { egress: egressName } : {}) });

describe('decideEgress', () => {
  it('gives a Run its own profile, else the install\'s default, with that profile\'s proxy and hosts', () => {
    expect(decideEgress(spec('open'), egress)).toEqual({ ok: true, plan: { egress: { profile: 'open', hosts: ['*'], reason: 'spec.egress' }, proxy: 'http://tcab-tcab-egress.evals.svc:3129', noProxy: egress.noProxy } });
    expect(decideEgress(spec(), egress)).toMatchObject({ ok: true, plan: { egress: { profile: 'registries', reason: "the install's default profile" }, proxy: PROXY } });
  });

  it('a Run that names no profile gets the install\'s default when the harness install gets through it, else the strictest profile that lets it (fewest hosts, * last)', () => {
    const strict = EgressConfig.parse({ ...egress, defaultProfile: 'none' });
    // An npm harness installing from the in-cluster cache needs nothing outside: the default.
    expect(decideEgress(spec(), strict, [])).toMatchObject({ ok: true, plan: { egress: { profile: 'none', reason: "the install's default profile" } } });
    // One that needs the public npm registry: registries lets it; so does open, which is broader.
    expect(decideEgress(spec(), strict, ['registry.npmjs.org'])).toMatchObject({ ok: true, plan: { egress: { profile: 'registries', reason: 'the strictest profile that lets the harness install reach registry.npmjs.org' } } });
    // A subdomain of a .domain entry is let through by it.
    expect(decideEgress(spec(), strict, ['objects.githubusercontent.com'])).toMatchObject({ plan: { egress: { profile: 'registries' } } });
    // Only * lets cursor.com through.
    expect(decideEgress(spec(), strict, ['cursor.com', 'downloads.cursor.com'])).toMatchObject({ plan: { egress: { profile: 'open' } } });
    // A Run that names one gets it, whatever its install needs.
    expect(decideEgress(spec('none'), strict, ['cursor.com'])).toMatchObject({ plan: { egress: { profile: 'none', reason: 'spec.egress' } } });
    // No profile lets it: the default, saying so.
    const closed = EgressConfig.parse({ ...egress, defaultProfile: 'none', profiles: { none: egress.profiles.none! } });
    expect(decideEgress(spec(), closed, ['cursor.com'])).toMatchObject({ plan: { egress: { profile: 'none', reason: "the install's default profile (no profile lets the harness install reach cursor.com)" } } });
  });

  it('installHostsOf: the manifest\'s hosts, and the npm registry unless it is reached directly (an in-cluster cache)', () => {
    expect(installHostsOf({ npm_package: '@anthropic-ai/claude-code' }, 'http://tcab-tcab-npm-cache.evals.svc:4873/', egress.noProxy)).toEqual([]);
    expect(installHostsOf({ npm_package: '@anthropic-ai/claude-code' }, 'https://registry.npmjs.org/', egress.noProxy)).toEqual(['registry.npmjs.org']);
    expect(installHostsOf({ hosts: ['github.com', '.githubusercontent.com'] }, 'https://registry.npmjs.org/', egress.noProxy)).toEqual(['.githubusercontent.com', 'github.com']);
    expect(installHostsOf(undefined, 'https://registry.npmjs.org/', egress.noProxy)).toEqual([]);
  });

  it.each([
    ['registry.npmjs.org', ['registry.npmjs.org'], true],
    ['a.githubusercontent.com', ['.githubusercontent.com'], true],
    ['githubusercontent.com', ['.githubusercontent.com'], true],
    ['evilgithubusercontent.com', ['.githubusercontent.com'], false],
    ['registry.npmjs.org.evil', ['registry.npmjs.org'], false],
    ['anything.example', ['*'], true],
    ['x', [], false],
  ])('hostAllowed(%s, %j) = %s', (host, hosts, want) => {
    expect(hostAllowed(host, hosts)).toBe(want);
  });

  it('refuses a profile the install does not define, naming spec.egress and the profiles there are', () => {
    expect(decideEgress(spec('internet'), egress)).toEqual({ ok: false, reason: 'invalid spec.egress: "internet" is not one of this install\'s egress profiles (none, open, registries)' });
    // Own keys only: a name that is a property of every object is no profile.
    expect(decideEgress({ egress: 'constructor' }, egress)).toMatchObject({ ok: false });
  });

  it('without profiles (no chart egress): no plan, and a Run that names one is refused rather than run unsealed', () => {
    expect(decideEgress(spec(), null)).toEqual({ ok: true });
    expect(decideEgress(spec('none'), null)).toMatchObject({ ok: false, reason: expect.stringContaining('spec.egress') });
  });

  it('the schema refuses names that could not be a label value or a Squid port name', () => {
    expect(RunSpec.safeParse({ harness: 'gg', model: 'm', prompt: 'p', egress: 'Open' }).success).toBe(false);
    expect(RunSpec.safeParse({ harness: 'gg', model: 'm', prompt: 'p', egress: 'a b' }).success).toBe(false);
    expect(EgressConfig.safeParse({ ...egress, defaultProfile: 'missing' }).success).toBe(false);
  });
});

describe('proxyEnv', () => {
  it('sets both spellings, NO_PROXY and NODE_USE_ENV_PROXY; nothing without a proxy', () => {
    const decided = decideEgress(spec(), egress);
    const plan = decided.ok ? decided.plan : undefined;
    expect(Object.fromEntries(proxyEnv(plan).map((e) => [e.name, e.value]))).toEqual({
      HTTP_PROXY: PROXY, HTTPS_PROXY: PROXY, http_proxy: PROXY, https_proxy: PROXY,
      NO_PROXY: '.svc,.svc.cluster.local,.cluster.local,localhost,127.0.0.1', no_proxy: '.svc,.svc.cluster.local,.cluster.local,localhost,127.0.0.1',
      NODE_USE_ENV_PROXY: '1',
    });
    expect(proxyEnv(undefined)).toEqual([]);
    expect(proxyEnv({ egress: { profile: 'x', hosts: [] }, noProxy: ['.svc'] })).toEqual([]);
  });
});

describe('matchesNoProxy', () => {
  it.each([
    ['stub-models.evals.svc.cluster.local', true],
    ['tcab-tcab-nats.evals.svc', true],
    ['localhost', true],
    ['registry.npmjs.org', false],
    ['evil-svc', false],
    ['svc.attacker.example', false],
    ['SVC', true],
  ])('%s -> %s', (host, want) => {
    expect(matchesNoProxy(host, egress.noProxy)).toBe(want);
  });
});

describe('namesToResolve', () => {
  it('NATS, the proxy and the URLs reached directly; not the hosts the proxy resolves, not IPs, not plain values', () => {
    const plan = decideEgress(spec(), egress);
    const names = namesToResolve('nats://tcab-tcab-nats.evals.svc:4222', {
      TCAB_NPM_REGISTRY: 'http://tcab-tcab-npm-cache.evals.svc:4873/',
      TCAB_BASE_URL_GG: 'http://stub-models.evals.svc.cluster.local:8080',
      TCAB_BASE_URL_CLAUDE: 'https://api.anthropic.com',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://10.0.0.9:4318',
      TCAB_LOG_LEVEL: 'debug',
      BROKEN: 'http://[::1',
    }, plan.ok ? plan.plan : undefined);
    expect(names).toEqual(['stub-models.evals.svc.cluster.local', 'tcab-tcab-egress.evals.svc', 'tcab-tcab-nats.evals.svc', 'tcab-tcab-npm-cache.evals.svc']);
  });

  it('the model gateway is resolved whatever NO_PROXY says: the Pod reaches it directly', () => {
    const plan = decideEgress(spec(), { ...egress, noProxy: ['localhost'] });
    expect(namesToResolve('nats://n:4222', {}, plan.ok ? plan.plan : undefined, ['http://gw.example.internal:8080'])).toEqual(['gw.example.internal', 'n', 'tcab-tcab-egress.evals.svc']);
  });

  it('without a proxy every URL host is reached directly', () => {
    expect(namesToResolve('nats://a:4222,nats://b:4222', { X: 'https://api.anthropic.com' }, undefined)).toEqual(['a', 'api.anthropic.com', 'b']);
  });
});

describe('hostAliasesOf', () => {
  it('one entry per address, names sorted, entries in address order: the same input gives the same Pod spec', () => {
    expect(hostAliasesOf(new Map([['b.svc', ['10.0.0.2']], ['a.svc', ['10.0.0.2', '10.0.0.1']]]))).toEqual([
      { ip: '10.0.0.1', hostnames: ['a.svc'] },
      { ip: '10.0.0.2', hostnames: ['a.svc', 'b.svc'] },
    ]);
  });
});

describe('the driver Pod of a profile', () => {
  const config = dispatcherConfig({ TCAB_NATS_URL: 'nats://tcab-tcab-nats.evals.svc:4222', TCAB_DRIVER_DNS: 'hosts', TCAB_EGRESS: JSON.stringify(egress), TCAB_DRIVER_ENV: JSON.stringify({ HTTPS_PROXY: 'http://corporate:8080', TCAB_LOG_LEVEL: 'debug' }) });
  const plan = decideEgress(spec('open'), config.TCAB_EGRESS);
  const aliases = [{ ip: '198.18.128.20', hostnames: ['tcab-tcab-nats.evals.svc'] }];
  const pod = buildDriverPod({ namespace: 'evals', name: 'r1', uid: 'u-1' }, spec('open'), config, [], { egress: plan.ok ? plan.plan : undefined, hostAliases: aliases });
  const env = Object.fromEntries(pod.spec!.containers[0]!.env!.map((e) => [e.name, e.value]));

  it('is labelled with its profile (what the profile\'s NetworkPolicy selects) and annotated with its hosts', () => {
    expect(pod.metadata!.labels![EGRESS_LABEL]).toBe('open');
    expect(JSON.parse(pod.metadata!.annotations![EGRESS_ANNOTATION]!)).toEqual({ profile: 'open', hosts: ['*'], reason: 'spec.egress' });
    expect(egressOfPod(pod)).toEqual({ profile: 'open', hosts: ['*'], reason: 'spec.egress' });
  });

  it('gets the profile\'s proxy over a proxy in the chart\'s driver.env, once', () => {
    expect(env.HTTPS_PROXY).toBe('http://tcab-tcab-egress.evals.svc:3129');
    expect(pod.spec!.containers[0]!.env!.filter((e) => e.name === 'HTTPS_PROXY')).toHaveLength(1);
    expect(env.TCAB_LOG_LEVEL).toBe('debug');
  });

  it('has no DNS server and the names it needs in /etc/hosts', () => {
    expect(pod.spec!.dnsPolicy).toBe('None');
    expect(pod.spec!.dnsConfig).toEqual(NO_DNS.dnsConfig);
    expect(pod.spec!.hostAliases).toEqual(aliases);
  });

  it('keeps the cluster\'s DNS where the install asks for it, and no label without profiles', () => {
    const plain = buildDriverPod({ namespace: 'evals', name: 'r1', uid: 'u-1' }, spec(), dispatcherConfig({}), []);
    expect(plain.spec!.dnsPolicy).toBeUndefined();
    expect(plain.spec!.hostAliases).toBeUndefined();
    expect(plain.metadata!.labels![EGRESS_LABEL]).toBeUndefined();
    expect(egressOfPod(plain)).toBeUndefined();
  });

  it('egressOfPod takes nothing from a label that is no profile name, and the annotation only when it is a RunEgress of the label\'s profile', () => {
    const edited = (label: string, annotation: string): V1Pod => ({ metadata: { labels: { [EGRESS_LABEL]: label }, annotations: { [EGRESS_ANNOTATION]: annotation } } });
    expect(egressOfPod(edited('Open!', '{}'))).toBeUndefined();
    expect(egressOfPod(edited('none', '{"profile":"none","hosts":["a", 1]}'))).toEqual({ profile: 'none', hosts: [] });
    expect(egressOfPod(edited('none', '{"profile":"open","hosts":["*"]}'))).toEqual({ profile: 'none', hosts: [] });
    expect(egressOfPod(edited('none', '{not json'))).toEqual({ profile: 'none', hosts: [] });
    expect(egressOfPod(edited('none', '{"profile":"none","hosts":["a"]}'))).toEqual({ profile: 'none', hosts: ['a'] });
  });
});

describe('HostResolver', () => {
  it('asks once per name within its time, again after a failure, and fails naming the name', async () => {
    const asked: string[] = [];
    let fail = true;
    const resolver = new HostResolver({ ttlMs: 60_000, lookup: async (name) => {
      asked.push(name);
      if (name === 'flaky.svc' && fail) throw new Error('ENOTFOUND');
      return name === 'empty.svc' ? [] : ['10.0.0.1'];
    } });
    expect(await resolver.resolve(['a.svc', 'a.svc'])).toEqual(new Map([['a.svc', ['10.0.0.1']]]));
    await resolver.resolve(['a.svc']);
    expect(asked.filter((n) => n === 'a.svc')).toHaveLength(1);
    await expect(resolver.resolve(['flaky.svc'])).rejects.toThrow('cannot resolve flaky.svc');
    fail = false;
    expect(await resolver.resolve(['flaky.svc'])).toEqual(new Map([['flaky.svc', ['10.0.0.1']]]));
    await expect(resolver.resolve(['empty.svc'])).rejects.toThrow('no IPv4 address');
  });
});

test.prop([fc.string(), fc.array(fc.string())])('matchesNoProxy never throws and an empty list matches nothing', (host, list) => {
  expect(typeof matchesNoProxy(host, list)).toBe('boolean');
  expect(matchesNoProxy(host, [])).toBe(false);
});
