// The chart's network values (issue 33), rendered with the pinned helm: which NetworkPolicies it makes and what each
// allows, the driver Pods' DNS setting, NATS monitoring on loopback, the npm cache's install credential, and what
// the install's notes say. What the policies do on a node that enforces them is test/e2e/sealed-network.test.ts's.
import { describe, expect, it } from 'vitest';
import type { V1ConfigMap, V1NetworkPolicy, V1Secret, V1StatefulSet } from '@kubernetes/client-node';
import { dispatcherEnv, notes, render } from './chart-render.ts';
import type { Manifest } from './chart-render.ts';

const policies = (all: Manifest[]) => all.filter((m) => m.kind === 'NetworkPolicy') as unknown as V1NetworkPolicy[];
const policy = (all: Manifest[], name: string) => policies(all).find((p) => p.metadata!.name === name)!;
const driver = { matchLabels: { 'app.kubernetes.io/name': 'tcab-driver' } };

describe('charts/tcab network (issue 33)', () => {
  it('by default: a policy per component and per egress profile; a driver Pod admits nothing and reaches NATS (and the npm cache when on) only, plus its profile\'s proxy port', async () => {
    const all = await render('--set', 'npmCache.enabled=true');
    expect(policies(all).map((p) => p.metadata!.name).sort()).toEqual(['t-tcab-dispatcher', 't-tcab-driver', 't-tcab-driver-egress-none', 't-tcab-driver-egress-open', 't-tcab-driver-egress-registries', 't-tcab-egress-proxy', 't-tcab-gateway', 't-tcab-nats', 't-tcab-npm-cache']);
    const d = policy(all, 't-tcab-driver');
    expect(d.spec!.podSelector).toEqual(driver);
    expect(d.spec!.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(d.spec!.ingress).toEqual([]);
    expect(d.spec!.egress).toEqual([
      { to: [{ podSelector: { matchLabels: { 'app.kubernetes.io/instance': 't', 'app.kubernetes.io/component': 'nats' } } }], ports: [{ protocol: 'TCP', port: 4222 }] },
      { to: [{ podSelector: { matchLabels: { 'app.kubernetes.io/instance': 't', 'app.kubernetes.io/component': 'npm-cache' } } }], ports: [{ protocol: 'TCP', port: 4873 }] },
      { to: [{ podSelector: { matchLabels: { 'app.kubernetes.io/instance': 't', 'app.kubernetes.io/component': 'gateway' } } }], ports: [{ protocol: 'TCP', port: 8080 }] },
    ]);
    // Each profile's Pods reach that profile's port of the proxy, and only it.
    for (const [name, port] of [['none', 3130], ['registries', 3128], ['open', 3129]] as const) {
      const p = policy(all, `t-tcab-driver-egress-${name}`);
      expect(p.spec!.podSelector).toEqual({ matchLabels: { 'app.kubernetes.io/name': 'tcab-driver', 'tcab.dev/egress': name } });
      expect(p.spec!.egress).toEqual([{ to: [{ podSelector: { matchLabels: { 'app.kubernetes.io/instance': 't', 'app.kubernetes.io/component': 'egress-proxy' } } }], ports: [{ protocol: 'TCP', port }] }]);
    }
    // The servers admit their own clients: NATS the dispatcher and the drivers; the npm cache and the proxy the drivers.
    expect(policy(all, 't-tcab-nats').spec!.ingress).toEqual([{ from: [{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'tcab', 'app.kubernetes.io/instance': 't', 'app.kubernetes.io/component': 'dispatcher' } } }, { podSelector: driver }], ports: [{ protocol: 'TCP', port: 4222 }] }]);
    expect(policy(all, 't-tcab-npm-cache').spec!.ingress).toEqual([{ from: [{ podSelector: driver }], ports: [{ protocol: 'TCP', port: 4873 }] }]);
    expect((policy(all, 't-tcab-egress-proxy').spec!.ingress![0] as unknown as { from: unknown }).from).toEqual([{ podSelector: driver }]);
    // The dispatcher's two ports: every Pod of every namespace but the drivers.
    const everyoneButDrivers = [{ namespaceSelector: {}, podSelector: { matchExpressions: [{ key: 'app.kubernetes.io/name', operator: 'NotIn', values: ['tcab-driver'] }] } }];
    expect(policy(all, 't-tcab-dispatcher').spec!.ingress).toEqual([{ from: everyoneButDrivers, ports: [{ protocol: 'TCP', port: 8080 }] }, { from: everyoneButDrivers, ports: [{ protocol: 'TCP', port: 9090 }] }]);
  });

  it('the egress proxy reaches DNS and ports 80/443 of every address but the denied destinations, per address family', async () => {
    const egress = policy(await render(), 't-tcab-egress-proxy').spec!.egress!;
    expect(egress[0]!.ports).toEqual([{ protocol: 'UDP', port: 53 }, { protocol: 'TCP', port: 53 }]);
    const [v4, v6] = egress[1]!.to!.map((peer) => peer.ipBlock!);
    expect(v4!.cidr).toBe('0.0.0.0/0');
    expect(v4!.except).toEqual(expect.arrayContaining(['10.0.0.0/8', '169.254.0.0/16', '172.16.0.0/12', '192.168.0.0/16', '198.18.0.0/15']));
    expect(v6!.cidr).toBe('::/0');
    expect(v6!.except).toEqual(expect.arrayContaining(['fc00::/7', 'fe80::/10', '::1/128']));
    expect(egress[1]!.ports).toEqual([{ protocol: 'TCP', port: 80 }, { protocol: 'TCP', port: 443 }]);
    // A bare address becomes a /32.
    const single = policy(await render('--set-json', 'egress.deniedDestinations=["10.1.2.3","fd00::1"]'), 't-tcab-egress-proxy').spec!.egress![1]!.to!;
    expect(single.map((p) => p.ipBlock!.except)).toEqual([['10.1.2.3/32'], ['fd00::1/128']]);
  });

  it('networkPolicy.driverEgress adds to the driver\'s egress; driver.dns=cluster adds the cluster\'s DNS and tells the dispatcher; an own NATS with nothing else leaves the driver an empty (valid) egress list', async () => {
    const gateway = { to: [{ podSelector: { matchLabels: { app: 'model-gateway' } } }], ports: [{ protocol: 'TCP', port: 8080 }] };
    const all = await render('--set-json', `networkPolicy.driverEgress=[${JSON.stringify(gateway)}]`, '--set', 'driver.dns=cluster');
    const egress = policy(all, 't-tcab-driver').spec!.egress!;
    expect(egress).toContainEqual(gateway);
    expect(egress).toContainEqual({ to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } }, podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } }], ports: [{ protocol: 'UDP', port: 53 }, { protocol: 'TCP', port: 53 }] });
    expect(dispatcherEnv(all).TCAB_DRIVER_DNS).toBe('cluster');
    expect(dispatcherEnv(await render()).TCAB_DRIVER_DNS).toBe('hosts');
    const own = policy(await render('--set', 'nats.url=nats://nats.example:4222', '--set', 'nats.auth.existingSecret=keys', '--set', 'gateway.enabled=false'), 't-tcab-driver');
    expect(own.spec!.egress).toEqual([]);
    expect(policies(await render('--set', 'nats.url=nats://nats.example:4222', '--set', 'nats.auth.existingSecret=keys')).map((p) => p.metadata!.name)).not.toContain('t-tcab-nats');
  });

  it('networkPolicy.enabled=false renders none, and the notes warn; on, the notes say what a driver reaches and what the policies need', async () => {
    expect(policies(await render('--set', 'networkPolicy.enabled=false'))).toEqual([]);
    expect(await notes('--set', 'networkPolicy.enabled=false')).toMatch(/WARNING: networkPolicy\.enabled is false: a run's agent reaches whatever the cluster network reaches/);
    const on = await notes();
    expect(on).toMatch(/NetworkPolicies are on: a driver Pod reaches NATS, the npm cache, its egress profile's proxy port/);
    expect(on).toMatch(/need a network plugin that enforces\s+NetworkPolicy/);
    expect(on).toMatch(/spec\.egress \(none, open, registries\); default: registries/);
    expect(await notes('--set', 'npmCache.enabled=true')).toMatch(/default: none/);
  });

  it('NATS monitoring listens on loopback only and the client port is the probe; the npm cache admits its install credential only, which the dispatcher hands to driver Pods by Secret', async () => {
    const all = await render('--set', 'npmCache.enabled=true');
    expect((all.find((m) => m.kind === 'ConfigMap' && m.metadata.name === 't-tcab-nats') as unknown as V1ConfigMap).data!['nats.conf']).toMatch(/^http: "127\.0\.0\.1:8222"$/m);
    const nats = (all.find((m) => m.kind === 'StatefulSet' && m.metadata.name === 't-tcab-nats') as unknown as V1StatefulSet).spec!.template.spec!.containers[0]!;
    expect(nats.ports).toEqual([{ name: 'client', containerPort: 4222 }]);
    expect(nats.readinessProbe).toMatchObject({ tcpSocket: { port: 'client' } });
    const config = (all.find((m) => m.kind === 'ConfigMap' && m.metadata.name === 't-tcab-npm-cache') as unknown as V1ConfigMap).data!['config.yaml']!;
    expect(config).toMatch(/access: \$authenticated/);
    expect(config).toMatch(/max_users: -1/);
    expect(config).not.toMatch(/\$all/);
    const secret = all.find((m) => m.kind === 'Secret' && m.metadata.name === 't-tcab-npm-cache-auth') as unknown as V1Secret;
    const auth = Buffer.from(Buffer.from(secret.data!.auth!, 'base64').toString(), 'base64').toString();
    expect(auth).toMatch(/^tcab-install:[A-Za-z0-9]{40}$/);
    expect(Buffer.from(secret.data!.htpasswd!, 'base64').toString()).toMatch(/^tcab-install:\$2[aby]\$/);
    expect(JSON.parse(dispatcherEnv(all).TCAB_DRIVER_NPM_AUTH_SECRET!)).toEqual({ secret: 't-tcab-npm-cache-auth', key: 'auth' });
    expect(dispatcherEnv(await render()).TCAB_DRIVER_NPM_AUTH_SECRET).toBeUndefined();
  });
});
