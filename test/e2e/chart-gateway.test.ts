// The chart's model gateway (issue 34), rendered with the pinned helm: the gateway Deployment alone holds the provider
// keys; the dispatcher mounts the shared auth Secret and names the gateway; the NetworkPolicies let the drivers and
// the dispatcher in and the gateway out to DNS, public HTTPS and its in-cluster upstreams; gateway.enabled=false
// restores the shape without it. What the driver Pods get is the dispatcher's (dispatcher/pods/driver-pod.test.ts).
import { describe, expect, it } from 'vitest';
import type { V1Deployment, V1EnvVar, V1NetworkPolicy, V1Role, V1Secret, V1Service } from '@kubernetes/client-node';
import { dispatcherEnv, one, render } from './chart-render.ts';
import type { Manifest } from './chart-render.ts';

const KEYS = '--set-json=credentials.apiKeys=[{"env":"ANTHROPIC_API_KEY","secret":"provider-keys","key":"anthropic"},{"env":"OPENAI_API_KEY","secret":"provider-keys","key":"openai"}]';
const gatewayOf = (all: Manifest[]) => one<V1Deployment>(all, 'Deployment', 't-tcab-gateway');
const containerOf = (d: V1Deployment) => d.spec!.template.spec!.containers[0]!;
const keyRefs = (env: V1EnvVar[]) => env.filter((e) => e.valueFrom?.secretKeyRef?.name === 'provider-keys').map((e) => e.name);
const selector = { 'app.kubernetes.io/instance': 't', 'app.kubernetes.io/component': 'gateway' };

describe('charts/tcab model gateway (issue 34)', () => {
  it('on by default: one replica (Recreate) of the dispatcher image running gateway/main.ts, hardened, holding the provider keys by secretKeyRef', async () => {
    const all = await render(KEYS, '--set-json=gateway.upstreams={"anthropic":"http://stub.ns.svc.cluster.local:8081"}');
    const gateway = gatewayOf(all)!;
    expect(gateway.spec!.replicas).toBe(1);
    expect(gateway.spec!.strategy).toEqual({ type: 'Recreate' });
    const pod = gateway.spec!.template.spec!;
    const container = containerOf(gateway);
    expect(container.image).toBe('ghcr.io/tcab/dispatcher:0.1.0');
    expect(container.command).toEqual(['node', '/opt/tcab/gateway/main.ts']);
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } });
    expect(container.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    expect(container.readinessProbe).toMatchObject({ httpGet: { path: '/tcab/healthz', port: 'http' } });
    expect(container.startupProbe).toMatchObject({ httpGet: { path: '/tcab/healthz', port: 'http' }, periodSeconds: 2, failureThreshold: 90 });
    expect(container.livenessProbe).toMatchObject({ timeoutSeconds: 5, failureThreshold: 6 });
    const env = Object.fromEntries(container.env!.map((e) => [e.name, e.value ?? e.valueFrom]));
    expect(env.ANTHROPIC_API_KEY).toEqual({ secretKeyRef: { name: 'provider-keys', key: 'anthropic', optional: true } });
    expect(env.OPENAI_API_KEY).toEqual({ secretKeyRef: { name: 'provider-keys', key: 'openai', optional: true } });
    expect(env).toMatchObject({ TCAB_GATEWAY_PORT: '8080', TCAB_GATEWAY_METRICS_PORT: '9090', TCAB_GATEWAY_SIGNING_KEY_FILE: '/var/run/tcab/gateway-auth/signing-key', TCAB_GATEWAY_ADMIN_TOKEN_FILE: '/var/run/tcab/gateway-auth/admin-token' });
    expect(JSON.parse(env.TCAB_GATEWAY_UPSTREAMS as string)).toEqual({ anthropic: 'http://stub.ns.svc.cluster.local:8081' });
    expect(pod.volumes!.find((v) => v.name === 'gateway-auth')!.secret!.secretName).toBe('t-tcab-gateway-auth');
    expect(container.volumeMounts).toContainEqual({ name: 'gateway-auth', mountPath: '/var/run/tcab/gateway-auth', readOnly: true });
    const service = one<V1Service>(all, 'Service', 't-tcab-gateway')!;
    expect(service.spec!.selector).toEqual(selector);
    expect(service.spec!.ports).toEqual([{ name: 'http', port: 8080, targetPort: 'http' }, { name: 'metrics', port: 9090, targetPort: 'metrics' }]);
  });

  it('the auth Secret: a signing key of 48 random bytes (base64 text) and an admin token; the dispatcher mounts it and names the gateway, with no key reference of its own', async () => {
    const all = await render(KEYS);
    const secret = one<V1Secret>(all, 'Secret', 't-tcab-gateway-auth')!;
    expect(Buffer.from(Buffer.from(secret.data!['signing-key']!, 'base64').toString(), 'base64')).toHaveLength(48);
    expect(Buffer.from(secret.data!['admin-token']!, 'base64').toString()).toMatch(/^[A-Za-z0-9]{48}$/);
    const env = dispatcherEnv(all);
    expect(env).toMatchObject({ TCAB_GATEWAY_URL: 'http://t-tcab-gateway.ns.svc.cluster.local:8080', TCAB_GATEWAY_SIGNING_KEY_FILE: '/var/run/tcab/gateway-auth/signing-key', TCAB_GATEWAY_ADMIN_TOKEN_FILE: '/var/run/tcab/gateway-auth/admin-token' });
    const dispatcher = one<V1Deployment>(all, 'Deployment', 't-tcab-dispatcher')!;
    expect(keyRefs(containerOf(dispatcher).env!)).toEqual([]);
    expect(containerOf(dispatcher).volumeMounts).toContainEqual({ name: 'gateway-auth', mountPath: '/var/run/tcab/gateway-auth', readOnly: true });
    // The dispatcher creates each Run's token Secret, with or without NATS auth.
    const role = one<V1Role>(await render(KEYS, '--set', 'nats.auth.enabled=false'), 'Role', 't-tcab-dispatcher')!;
    expect(role.rules).toContainEqual({ apiGroups: [''], resources: ['secrets'], verbs: ['create'] });
  });

  it('NetworkPolicies: in from the drivers and the dispatcher (8080) and metrics scrapers (9090); out to DNS, HTTPS of public addresses, and networkPolicy.gatewayEgress', async () => {
    const stub = { to: [{ podSelector: { matchLabels: { app: 'stub-models' } } }], ports: [{ protocol: 'TCP', port: 8081 }] };
    const all = await render(`--set-json=networkPolicy.gatewayEgress=[${JSON.stringify(stub)}]`);
    const policy = one<V1NetworkPolicy>(all, 'NetworkPolicy', 't-tcab-gateway')!;
    expect(policy.spec!.podSelector).toEqual({ matchLabels: selector });
    expect(policy.spec!.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(policy.spec!.ingress![0]).toEqual({ from: [{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'tcab-driver' } } }, { podSelector: { matchLabels: { 'app.kubernetes.io/name': 'tcab', 'app.kubernetes.io/instance': 't', 'app.kubernetes.io/component': 'dispatcher' } } }], ports: [{ protocol: 'TCP', port: 8080 }] });
    expect(policy.spec!.ingress![1]!.ports).toEqual([{ protocol: 'TCP', port: 9090 }]);
    // Helm's YAML has `from`; the client type names it `_from`.
    const fromOf = (rule: unknown) => (rule as { from: unknown }).from;
    expect(fromOf(policy.spec!.ingress![1])).toEqual(fromOf(one<V1NetworkPolicy>(all, 'NetworkPolicy', 't-tcab-dispatcher')!.spec!.ingress![1]));
    const egress = policy.spec!.egress!;
    expect(egress[0]!.ports).toEqual([{ protocol: 'UDP', port: 53 }, { protocol: 'TCP', port: 53 }]);
    expect(egress[1]!.ports).toEqual([{ protocol: 'TCP', port: 443 }]);
    expect(egress[1]!.to![0]!.ipBlock!.except).toEqual(expect.arrayContaining(['10.0.0.0/8', '169.254.0.0/16']));
    expect(egress[2]).toEqual(stub);
    expect(one<V1NetworkPolicy>(all, 'NetworkPolicy', 't-tcab-driver')!.spec!.egress).toContainEqual({ to: [{ podSelector: { matchLabels: selector } }], ports: [{ protocol: 'TCP', port: 8080 }] });
  });

  it('gateway.enabled=false restores the shape without it: no gateway objects, no gateway settings or mount in the dispatcher, no driver rule', async () => {
    const all = await render(KEYS, '--set', 'gateway.enabled=false');
    expect(all.filter((m) => m.metadata.name.startsWith('t-tcab-gateway'))).toEqual([]);
    const env = dispatcherEnv(all);
    expect(Object.keys(env).filter((name) => name.startsWith('TCAB_GATEWAY_'))).toEqual([]);
    expect(JSON.parse(env.TCAB_API_KEY_SECRETS!)).toHaveLength(2);
    const dispatcher = one<V1Deployment>(all, 'Deployment', 't-tcab-dispatcher')!;
    expect(JSON.stringify(dispatcher)).not.toMatch(/gateway/);
    expect(JSON.stringify(one<V1NetworkPolicy>(all, 'NetworkPolicy', 't-tcab-driver'))).not.toMatch(/gateway/);
  });

  it('gateway.image defaults to the dispatcher\'s and can be its own', async () => {
    expect(containerOf(gatewayOf(await render('--set', 'gateway.image.repository=registry.example/gw', '--set', 'gateway.image.tag=1.2'))!)).toMatchObject({ image: 'registry.example/gw:1.2' });
  });
});
