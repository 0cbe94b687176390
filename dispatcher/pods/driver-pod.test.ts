import { describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { GATEWAY_PROVIDER_VARIABLE, GATEWAY_URL_VARIABLE } from '../../shared/gateway.ts';
import { ATTEMPT_LABEL, AWAIT_POD_START_SECONDS, attemptOfPod, CREDENTIALS_MOUNT, GATEWAY_LABEL, GATEWAY_TOKEN_KEY, NATS_CREDS_DIR, NATS_CREDS_PATH, NPM_AUTH_DIR, buildDriverPod, clusterRunId, driverEnvVars, driverPodName } from './driver-pod.ts';
import { runInboxPrefix } from '../../nats/auth/index.ts';
import { BASE_URL_VARIABLE, DriverEnvFields, parseDriverEnv, parseDriverEnvFields } from '../../shared/driver-env.ts';
import { clusterAvailability } from './availability.ts';
import { dispatcherConfig } from '../config.ts';
import { RunSpec } from '../../shared/run.ts';
import { getHarness } from '../../harnesses/registry.ts';
import { InvalidInputError } from '../../shared/errors.ts';

const run = { namespace: 'evals', name: 'fix-bug-17', uid: '0f1e2d3c-aaaa-bbbb-cccc-1234567890ab' };
const spec = RunSpec.parse({ harness: 'claude', model: 'claude-sonnet-4-5', prompt: 'fix it', maxRuntimeSeconds: 900 });
const configEnv = {
  TCAB_DRIVER_IMAGE: 'registry.example/tcab/driver:1.2.3',
  TCAB_NATS_URL: 'nats://nats.tcab:4222',
  TCAB_NATS_SECRET: 'tcab-nats',
  TCAB_API_KEY_SECRETS: JSON.stringify([{ env: 'ANTHROPIC_API_KEY', secret: 'provider-keys', key: 'anthropic' }, { env: 'OPENAI_API_KEY', secret: 'provider-keys', key: 'openai' }]),
  TCAB_SUBSCRIPTION_SECRETS: JSON.stringify({ claude: 'claude-subscription' }),
  TCAB_DRIVER_ENV: JSON.stringify({ TCAB_NPM_REGISTRY: 'http://verdaccio.tcab:4873/' }),
};
const config = dispatcherConfig(configEnv);
const claudeAuth = getHarness('claude').manifest.auth;

describe('buildDriverPod', () => {
  const pod = buildDriverPod(run, spec, config, ['TCAB_API_KEY_CLAUDE', 'ANTHROPIC_API_KEY']);
  const container = pod.spec!.containers[0]!;

  it('has a deterministic name and an owner reference to its Run', () => {
    expect(pod.metadata!.name).toBe('tcab-run-fix-bug-17');
    expect(driverPodName({ ...run, name: 'x'.repeat(80) })).toMatch(/^tcab-run-x{45}-0f1e2d3c$/);
    expect(pod.metadata!.ownerReferences).toEqual([{ apiVersion: 'tcab.dev/v1alpha1', kind: 'Run', name: 'fix-bug-17', uid: run.uid, controller: true, blockOwnerDeletion: true }]);
  });

  it('is hardened: the driver root with only the capabilities to hand the run to uid 1000, no escalation, RuntimeDefault seccomp, a read-only root (scratch on the /tmp emptyDir), no service-account token', () => {
    expect(pod.spec!.automountServiceAccountToken).toBe(false);
    // Issue 22: the driver is uid 0 (it drops the harness to 1000, driver/run-user.ts), so the Pod is not runAsNonRoot
    // and has no fsGroup (which would make the root-only Secret files readable by group 1000).
    expect(pod.spec!.securityContext).toEqual({ seccompProfile: { type: 'RuntimeDefault' } });
    expect(container.securityContext).toEqual({
      runAsUser: 0,
      runAsGroup: 0,
      runAsNonRoot: false,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'], add: ['CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'KILL', 'SETGID', 'SETUID'] },
    });
    // Within the Pod Security Standards' baseline list (no SYS_PTRACE, SYS_ADMIN, NET_RAW...).
    const baseline = ['AUDIT_WRITE', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'MKNOD', 'NET_BIND_SERVICE', 'SETFCAP', 'SETGID', 'SETPCAP', 'SETUID', 'SYS_CHROOT'];
    expect(container.securityContext!.capabilities!.add!.filter((c) => !baseline.includes(c))).toEqual([]);
    expect(pod.spec!.volumes).toContainEqual({ name: 'tmp', emptyDir: {} });
    expect(container.volumeMounts).toContainEqual({ name: 'tmp', mountPath: '/tmp' });
    expect(pod.spec!.activeDeadlineSeconds).toBe(900 + 120);
  });

  it("issue 39: a test case's check runs after the sessions, so the Pod's deadline is the runtime plus the check's timeout", () => {
    const checked = RunSpec.parse({ ...spec, testCase: { check: { command: 'npm test', timeoutSeconds: 300 } } });
    expect(buildDriverPod(run, checked, config, []).spec!.activeDeadlineSeconds).toBe(900 + 300 + 120);
    const defaulted = RunSpec.parse({ ...spec, testCase: { check: { command: 'npm test' } } });
    expect(buildDriverPod(run, defaulted, config, []).spec!.activeDeadlineSeconds).toBe(900 + 600 + 120);
  });

  it('issue 36: the node\'s release store (driver.releaseStore.hostPath) is a hostPath volume the driver is told of; without one the driver keeps none', () => {
    const envOf = (p: V1Pod) => Object.fromEntries(p.spec!.containers[0]!.env!.map((e) => [e.name, e.value]));
    expect(envOf(pod).TCAB_RELEASE_STORE).toBe('off');
    expect(envOf(pod)).not.toHaveProperty('TCAB_PREFIX_ROOT'); // the prefix stays in the run's root (the emptyDir)
    expect(pod.spec!.volumes!.map((v) => v.name)).not.toContain('release-store');
    const stored = buildDriverPod(run, spec, dispatcherConfig({ ...configEnv, TCAB_DRIVER_RELEASE_STORE: '/var/lib/tcab' }), ['ANTHROPIC_API_KEY']);
    expect(stored.spec!.volumes).toContainEqual({ name: 'release-store', hostPath: { path: '/var/lib/tcab', type: 'DirectoryOrCreate' } });
    // One mount for the store and the prefixes: a hard link never crosses a mount.
    expect(stored.spec!.containers[0]!.volumeMounts!.filter((m) => m.name === 'release-store')).toEqual([{ name: 'release-store', mountPath: '/var/cache/tcab' }]);
    expect(envOf(stored)).toMatchObject({ TCAB_RELEASE_STORE: '/var/cache/tcab/releases', TCAB_PREFIX_ROOT: '/var/cache/tcab/prefixes' });
    // What the driver reads from it is valid driver env.
    const driverEnv = parseDriverEnvFields(Object.fromEntries(stored.spec!.containers[0]!.env!.flatMap((e) => (e.value === undefined ? [] : [[e.name, e.value]]))), ['TCAB_RELEASE_STORE', 'TCAB_PREFIX_ROOT']);
    expect(driverEnv).toEqual({ TCAB_RELEASE_STORE: '/var/cache/tcab/releases', TCAB_PREFIX_ROOT: '/var/cache/tcab/prefixes' });
    expect(() => dispatcherConfig({ ...configEnv, TCAB_DRIVER_RELEASE_STORE: 'relative/releases' })).toThrow(/TCAB_DRIVER_RELEASE_STORE.*must be an absolute path/);
  });

  it('TCAB_DRIVER_NATS_URL, when set, is the NATS the Pod is told (a dispatcher outside the Pod network reaches another)', () => {
    const outside = { ...config, TCAB_NATS_URL: 'nats://127.0.0.1:4222', TCAB_DRIVER_NATS_URL: dispatcherConfig({ TCAB_DRIVER_NATS_URL: 'nats://10.0.0.5:4222' }).TCAB_DRIVER_NATS_URL };
    const env = Object.fromEntries(buildDriverPod(run, spec, outside, ['ANTHROPIC_API_KEY']).spec!.containers[0]!.env!.map((e) => [e.name, e.value]));
    expect(env.TCAB_NATS_URL).toBe('nats://10.0.0.5:4222');
  });

  it('gives attempt n after the first its own Pod name (63 characters at most), attempt id and number', () => {
    const third = { ...run, attempt: 3 };
    const env = Object.fromEntries(buildDriverPod(third, spec, config, ['ANTHROPIC_API_KEY']).spec!.containers[0]!.env!.map((e) => [e.name, e.value]));
    expect(driverPodName(third)).toBe(`${driverPodName(run)}-a3`);
    expect([env.TCAB_RUN_ATTEMPT, env.TCAB_RUN_ATTEMPT_NUMBER]).toEqual([`${run.uid}-3`, '3']);
    const long = { ...run, name: 'n'.repeat(63) };
    const names = [1, 2, 10].map((attempt) => driverPodName({ ...long, attempt }));
    expect(names.every((n) => n.length <= 63 && /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/.test(n))).toBe(true);
    expect(new Set(names).size).toBe(3);
    expect(names[2]).toMatch(/-a10$/);
  });

  it('carries the run spec and NATS in env, only this harness’s key by secretKeyRef, and mounts its subscription Secret read-only', () => {
    const env = Object.fromEntries(container.env!.map((e) => [e.name, e.value ?? e.valueFrom]));
    expect(JSON.parse(env.TCAB_RUN_SPEC as string)).toEqual(spec);
    expect(env.TCAB_RUN_ID).toBe(clusterRunId(run));
    expect(env.TCAB_RUN_ATTEMPT).toBe(run.uid); // a Run re-created under its name publishes under new message ids
    expect([env.TCAB_RUN_ATTEMPT_NUMBER, env.TCAB_RUN_ATTEMPTS]).toEqual(['1', '3']); // spec.retries defaults to 2
    expect(pod.metadata!.labels!['tcab.dev/attempt']).toBe('1');
    expect(env.TCAB_NATS_URL).toBe('nats://nats.tcab:4222');
    expect(env.TCAB_AWAIT_POD_START_SECONDS).toBe('15'); // the driver's events follow this Pod's start events
    expect(env.TCAB_NPM_REGISTRY).toBe('http://verdaccio.tcab:4873/');
    expect(env.ANTHROPIC_API_KEY).toEqual({ secretKeyRef: { name: 'provider-keys', key: 'anthropic', optional: true } });
    expect(env.OPENAI_API_KEY).toBeUndefined();
    expect(env.TCAB_NATS_PASSWORD).toEqual({ secretKeyRef: { name: 'tcab-nats', key: 'password', optional: true } });
    expect(pod.spec!.volumes).toContainEqual({ name: 'credentials', secret: { secretName: 'claude-subscription', defaultMode: 0o400 } });
    expect(container.volumeMounts).toContainEqual({ name: 'credentials', mountPath: '/var/run/tcab/credentials', readOnly: true });
    expect(JSON.stringify(pod)).not.toMatch(/sk-ant|sk-proj/);
  });
});

describe('the run\'s NATS credential (issue 22)', () => {
  it('natsCredsSecret: the Secret\'s nats.creds mounted root-only (0400) at /var/run/tcab/nats; TCAB_NATS_CREDS names it, TCAB_NATS_INBOX_PREFIX is the run\'s', () => {
    const pod = buildDriverPod(run, spec, config, [], { natsCredsSecret: 'tcab-run-fix-bug-17-nats' });
    const container = pod.spec!.containers[0]!;
    expect(pod.spec!.volumes).toContainEqual({ name: 'nats-creds', secret: { secretName: 'tcab-run-fix-bug-17-nats', defaultMode: 0o400, items: [{ key: 'nats.creds', path: 'nats.creds' }] } });
    expect(container.volumeMounts).toContainEqual({ name: 'nats-creds', mountPath: NATS_CREDS_DIR, readOnly: true });
    expect(NATS_CREDS_PATH).toBe('/var/run/tcab/nats/nats.creds');
    expect(container.env).toContainEqual({ name: 'TCAB_NATS_CREDS', value: '/var/run/tcab/nats/nats.creds' });
    expect(container.env).toContainEqual({ name: 'TCAB_NATS_INBOX_PREFIX', value: '_INBOX_evals_fix-bug-17' });
    expect(runInboxPrefix(clusterRunId(run))).toBe('_INBOX_evals_fix-bug-17');
    // fsGroup would turn 0400 into 0440 group 1000 (the kubelet's volume ownership), readable by the run user.
    expect(pod.spec!.securityContext!.fsGroup).toBeUndefined();
  });

  it('without it, no credential volume or variable; a chart driver.env cannot set them either', () => {
    const hijack = dispatcherConfig({ TCAB_DRIVER_ENV: JSON.stringify({ TCAB_NATS_CREDS: '/elsewhere', TCAB_NATS_INBOX_PREFIX: '_INBOX' }) });
    const withSecret = buildDriverPod(run, spec, hijack, [], { natsCredsSecret: 's' }).spec!.containers[0]!.env!;
    expect(withSecret.filter((e) => e.name.startsWith('TCAB_NATS_CREDS') || e.name === 'TCAB_NATS_INBOX_PREFIX')).toEqual([
      { name: 'TCAB_NATS_CREDS', value: '/var/run/tcab/nats/nats.creds' },
      { name: 'TCAB_NATS_INBOX_PREFIX', value: '_INBOX_evals_fix-bug-17' },
    ]);
    const pod = buildDriverPod(run, spec, config, []);
    expect(JSON.stringify(pod)).not.toMatch(/nats-creds|TCAB_NATS_CREDS|TCAB_NATS_INBOX_PREFIX/);
  });
});

describe('through the cluster\'s model gateway (issue 34)', () => {
  const gateway = { tokenSecret: 'tcab-run-fix-bug-17-gw-uid', url: 'http://t-tcab-gateway.evals.svc.cluster.local:8080', provider: 'anthropic', keyVar: 'ANTHROPIC_API_KEY' };
  const plan = (noProxy: string[]) => ({ egress: { profile: 'registries', hosts: [], reason: 'test' }, proxy: 'http://t-tcab-egress.evals.svc:3128', noProxy });
  const envOf = (pod: ReturnType<typeof buildDriverPod>) => pod.spec!.containers[0]!.env!;

  it('the token under the key variable, the gateway\'s URL and provider, and no provider key Secret referenced at all', () => {
    const pod = buildDriverPod(run, spec, config, ['TCAB_API_KEY_CLAUDE', 'ANTHROPIC_API_KEY'], { gateway });
    const env = envOf(pod);
    expect(env).toContainEqual({ name: 'ANTHROPIC_API_KEY', valueFrom: { secretKeyRef: { name: gateway.tokenSecret, key: GATEWAY_TOKEN_KEY, optional: true } } });
    expect(env).toContainEqual({ name: GATEWAY_URL_VARIABLE, value: gateway.url });
    expect(env).toContainEqual({ name: GATEWAY_PROVIDER_VARIABLE, value: 'anthropic' });
    const secretRefs = env.flatMap((e) => (e.valueFrom?.secretKeyRef ? [e.valueFrom.secretKeyRef.name] : []));
    for (const ref of config.TCAB_API_KEY_SECRETS) expect(secretRefs).not.toContain(ref.secret);
    expect(env.filter((e) => e.name === 'ANTHROPIC_API_KEY')).toHaveLength(1);
    expect(pod.metadata!.labels![GATEWAY_LABEL]).toBe('anthropic');
    // Without the gateway: the key by secretKeyRef as before, and no gateway variable or label.
    const keyed = buildDriverPod(run, spec, config, ['ANTHROPIC_API_KEY']);
    expect(envOf(keyed)).toContainEqual({ name: 'ANTHROPIC_API_KEY', valueFrom: { secretKeyRef: { name: 'provider-keys', key: 'anthropic', optional: true } } });
    expect(JSON.stringify(keyed)).not.toMatch(/TCAB_GATEWAY_|tcab\.dev\/gateway/);
  });

  it('a chart driver.env cannot replace the token or point the run at another gateway', () => {
    const hijack = dispatcherConfig({ TCAB_API_KEY_SECRETS: JSON.stringify(config.TCAB_API_KEY_SECRETS), TCAB_DRIVER_ENV: JSON.stringify({ ANTHROPIC_API_KEY: 'sk-ant-plain', TCAB_GATEWAY_URL: 'http://evil:1', TCAB_GATEWAY_PROVIDER: 'openai' }) });
    const env = envOf(buildDriverPod(run, spec, hijack, ['ANTHROPIC_API_KEY'], { gateway }));
    expect(env.filter((e) => e.name === 'ANTHROPIC_API_KEY' || e.name.startsWith('TCAB_GATEWAY_'))).toEqual([
      { name: 'ANTHROPIC_API_KEY', valueFrom: { secretKeyRef: { name: gateway.tokenSecret, key: 'token', optional: true } } },
      { name: GATEWAY_URL_VARIABLE, value: gateway.url },
      { name: GATEWAY_PROVIDER_VARIABLE, value: 'anthropic' },
    ]);
  });

  it('behind the egress proxy, NO_PROXY names the gateway\'s host unless the install\'s noProxy already covers it', () => {
    const env = envOf(buildDriverPod(run, spec, config, [], { gateway, egress: plan(['localhost']) }));
    for (const name of ['NO_PROXY', 'no_proxy']) expect(env).toContainEqual({ name, value: 'localhost,t-tcab-gateway.evals.svc.cluster.local' });
    const covered = envOf(buildDriverPod(run, spec, config, [], { gateway, egress: plan(['.svc.cluster.local', 'localhost']) }));
    expect(covered).toContainEqual({ name: 'NO_PROXY', value: '.svc.cluster.local,localhost' });
    // No proxy: no NO_PROXY either.
    expect(envOf(buildDriverPod(run, spec, config, [], { gateway })).map((e) => e.name)).not.toContain('NO_PROXY');
  });
});

describe('the npm cache\'s install credential (issue 33)', () => {
  it('TCAB_DRIVER_NPM_AUTH_SECRET: its key mounted root-only (0400) at /var/run/tcab/npm/auth, TCAB_NPM_AUTH_FILE names it; a chart driver.env cannot point it elsewhere', () => {
    const withAuth = dispatcherConfig({ TCAB_DRIVER_NPM_AUTH_SECRET: JSON.stringify({ secret: 'tcab-tcab-npm-cache-auth', key: 'auth' }), TCAB_DRIVER_ENV: JSON.stringify({ TCAB_NPM_AUTH_FILE: '/elsewhere' }) });
    const pod = buildDriverPod(run, spec, withAuth, []);
    expect(pod.spec!.volumes).toContainEqual({ name: 'npm-auth', secret: { secretName: 'tcab-tcab-npm-cache-auth', defaultMode: 0o400, items: [{ key: 'auth', path: 'auth' }] } });
    expect(pod.spec!.containers[0]!.volumeMounts).toContainEqual({ name: 'npm-auth', mountPath: NPM_AUTH_DIR, readOnly: true });
    expect(pod.spec!.containers[0]!.env!.filter((e) => e.name === 'TCAB_NPM_AUTH_FILE')).toEqual([{ name: 'TCAB_NPM_AUTH_FILE', value: '/var/run/tcab/npm/auth' }]);
    expect(JSON.stringify(buildDriverPod(run, spec, config, []))).not.toMatch(/npm-auth|TCAB_NPM_AUTH_FILE/);
  });
});

describe('clusterRunId', () => {
  it('finding 10: is `<namespace>_<name with . as _>`, unchanged in the driver env and events subject; a name too long is refused naming metadata.name', () => {
    expect(clusterRunId(run)).toBe('evals_fix-bug-17');
    expect(clusterRunId({ ...run, namespace: 'a-b', name: 'c' })).not.toBe(clusterRunId({ ...run, namespace: 'a', name: 'b-c' }));
    expect(clusterRunId({ ...run, name: 'fix.bug.17' })).toBe('evals_fix_bug_17');
    const tooLong = { ...run, name: 'x'.repeat(200) };
    expect(() => clusterRunId(tooLong)).toThrow(InvalidInputError);
    expect(() => clusterRunId(tooLong)).toThrow(/^metadata\.name: "evals\/x+" cannot be a run id/);
  });
});

describe('clusterAvailability (Secret metadata only)', () => {
  it('prefers the subscription Secret when it exists', () => {
    expect(clusterAvailability(claudeAuth, spec, config, new Set(['claude-subscription', 'provider-keys']), {})).toMatchObject({ available: true, mode: 'subscription' });
  });
  it('falls back to an API key whose configured Secret exists', () => {
    expect(clusterAvailability(claudeAuth, spec, config, new Set(['provider-keys']), {})).toMatchObject({ available: true, mode: 'api-key', keyVar: 'ANTHROPIC_API_KEY' });
  });
  it('is unavailable with a message naming the chart settings when no configured Secret exists', () => {
    const result = clusterAvailability(claudeAuth, spec, config, new Set(['some-other-secret']), {});
    expect(result).toMatchObject({ available: false });
    expect(!result.available && result.reason).toMatch(/^configure a Secret key for TCAB_API_KEY_CLAUDE or ANTHROPIC_API_KEY in the chart's credentials.apiKeys, or a Secret holding .credentials.json in credentials.subscriptions.claude/);
  });
  it('counts a key from the driver environment even with no Secret', () => {
    expect(clusterAvailability(claudeAuth, spec, config, new Set(), { ANTHROPIC_API_KEY: 'sk-ant-fake' })).toMatchObject({ available: true, mode: 'api-key' });
  });
});

describe('dispatcherConfig', () => {
  it('names the variable of a bad value', () => {
    expect(() => dispatcherConfig({ TCAB_DISPATCHER_MAX_INFLIGHT: '-2' })).toThrow(InvalidInputError);
    expect(() => dispatcherConfig({ TCAB_DISPATCHER_MAX_INFLIGHT: '-2' })).toThrow(/TCAB_DISPATCHER_MAX_INFLIGHT: must be a non-negative integer or "unlimited"/);
    expect(dispatcherConfig({ TCAB_DISPATCHER_MAX_INFLIGHT: 'unlimited' }).TCAB_DISPATCHER_MAX_INFLIGHT).toBeNull();
    expect(dispatcherConfig({ TCAB_DISPATCHER_MAX_INFLIGHT: '20' }).TCAB_DISPATCHER_MAX_INFLIGHT).toBe(20);
  });
  it('names a JSON variable that does not parse or does not fit, and what it must be', () => {
    expect(() => dispatcherConfig({ TCAB_API_KEY_SECRETS: '{not json' })).toThrow(/TCAB_API_KEY_SECRETS: must be a JSON list of \{env, secret, key\}/);
    expect(() => dispatcherConfig({ TCAB_SUBSCRIPTION_SECRETS: '["claude"]' })).toThrow(/TCAB_SUBSCRIPTION_SECRETS: must be a JSON object \{slug: secretName\}/);
  });
});

describe('driver Pods and caller-chosen harness slugs (issue 19)', () => {
  const slugged = (harness: string) => RunSpec.parse({ harness, model: 'm', prompt: 'p', maxRuntimeSeconds: 60 });

  it('finding 9: a harness slug named like an Object property ("constructor") finds no subscription Secret', () => {
    const pod = buildDriverPod(run, slugged('constructor'), config, []);
    expect(pod.spec!.volumes!.map((v) => v.name)).toEqual(['tmp']);
    expect(pod.spec!.containers[0]!.volumeMounts!.map((m) => m.name)).toEqual(['tmp']);
    const resolution = clusterAvailability(claudeAuth, slugged('constructor'), config, new Set(['provider-keys']), {});
    expect(resolution.available && resolution.mode).not.toBe('subscription');
  });
});

describe('driver Pods and the chart extra CA (issue 20)', () => {
  const withCa = dispatcherConfig({ TCAB_DRIVER_EXTRA_CA: JSON.stringify({ configMap: 'tcab-extra-ca', key: 'proxy-ca.pem' }) });

  it('mount the TCAB_DRIVER_EXTRA_CA ConfigMap key read-only at /etc/tcab/extra-ca/ca.crt; NODE_EXTRA_CA_CERTS names it, the non-Node tools\' variables the merged bundle the driver writes on /tmp', () => {
    const pod = buildDriverPod(run, spec, withCa, []);
    const container = pod.spec!.containers[0]!;
    expect(pod.spec!.volumes).toContainEqual({ name: 'extra-ca', configMap: { name: 'tcab-extra-ca', items: [{ key: 'proxy-ca.pem', path: 'ca.crt' }] } });
    expect(container.volumeMounts).toContainEqual({ name: 'extra-ca', mountPath: '/etc/tcab/extra-ca', readOnly: true });
    expect(container.env).toContainEqual({ name: 'NODE_EXTRA_CA_CERTS', value: '/etc/tcab/extra-ca/ca.crt' });
    expect(container.env).toContainEqual({ name: 'TCAB_CA_BUNDLE', value: '/tmp/.tcab-ca/ca-certificates.crt' });
    for (const name of ['SSL_CERT_FILE', 'GIT_SSL_CAINFO', 'REQUESTS_CA_BUNDLE', 'CURL_CA_BUNDLE', 'PIP_CERT']) expect(container.env).toContainEqual({ name, value: '/tmp/.tcab-ca/ca-certificates.crt' });
  });

  it('without the variable, driver Pods have no extra CA volume, mount or variable', () => {
    const pod = buildDriverPod(run, spec, config, []);
    expect(JSON.stringify(pod)).not.toMatch(/extra-ca|NODE_EXTRA_CA_CERTS|SSL_CERT_FILE|TCAB_CA_BUNDLE/);
  });

  it('a TCAB_DRIVER_EXTRA_CA that is not {configMap, key} stops the dispatcher naming the variable', () => {
    expect(() => dispatcherConfig({ TCAB_DRIVER_EXTRA_CA: '{"configMap":"x"}' })).toThrow(/TCAB_DRIVER_EXTRA_CA: must be a JSON object \{configMap, key\}/);
    expect(() => dispatcherConfig({ TCAB_DRIVER_EXTRA_CA: 'tcab-extra-ca' })).toThrow(/TCAB_DRIVER_EXTRA_CA/);
  });
});

describe('driver Pods and the chart OpenTelemetry headers (issue 24)', () => {
  it('take OTEL_EXPORTER_OTLP_HEADERS from the TCAB_DRIVER_OTEL_HEADERS_SECRET Secret key, by reference only', () => {
    const withHeaders = dispatcherConfig({ TCAB_DRIVER_OTEL_HEADERS_SECRET: JSON.stringify({ secret: 'otlp-token', key: 'headers' }) });
    const env = buildDriverPod(run, spec, withHeaders, []).spec!.containers[0]!.env!;
    expect(env).toContainEqual({ name: 'OTEL_EXPORTER_OTLP_HEADERS', valueFrom: { secretKeyRef: { name: 'otlp-token', key: 'headers', optional: true } } });
    expect(JSON.stringify(buildDriverPod(run, spec, config, []))).not.toContain('OTEL_EXPORTER_OTLP_HEADERS');
    expect(() => dispatcherConfig({ TCAB_DRIVER_OTEL_HEADERS_SECRET: '{"secret":"x"}' })).toThrow(/TCAB_DRIVER_OTEL_HEADERS_SECRET: must be a JSON object \{secret, key\}/);
  });
});

describe('the Pod env is the driver env contract (shared/driver-env.ts)', () => {
  const withCa = dispatcherConfig({
    TCAB_NATS_URL: 'nats://nats.tcab:4222',
    TCAB_DRIVER_ENV: JSON.stringify({ TCAB_NPM_REGISTRY: 'http://verdaccio.tcab:4873/', TCAB_BASE_URL_GG: 'http://stub.tcab:8080' }),
    TCAB_DRIVER_EXTRA_CA: JSON.stringify({ configMap: 'tcab-extra-ca', key: 'ca.pem' }),
  });
  const written = (pod: ReturnType<typeof buildDriverPod>) => pod.spec!.containers[0]!.env!;
  const literal = (pod: ReturnType<typeof buildDriverPod>) => Object.fromEntries(written(pod).flatMap((e) => (e.value === undefined ? [] : [[e.name, e.value]])));

  it('round trip: what buildDriverPod writes for a Run decodes with the driver env schema into the values it meant', () => {
    const settings = parseDriverEnv(literal(buildDriverPod(run, spec, withCa, [])));
    expect(settings).toEqual({
      TCAB_RUN_ID: 'evals_fix-bug-17',
      TCAB_RUN_ATTEMPT: run.uid,
      TCAB_RUN_ATTEMPT_NUMBER: 1,
      TCAB_RUN_ATTEMPTS: 3,
      TCAB_RUN_SPEC: spec,
      TCAB_CREDENTIALS_DIR: CREDENTIALS_MOUNT,
      TCAB_RUN_ROOT: '/tmp/tcab',
      TCAB_AWAIT_POD_START_SECONDS: AWAIT_POD_START_SECONDS,
      TCAB_RELEASE_STORE: 'off',
      TCAB_NPM_REGISTRY: 'http://verdaccio.tcab:4873/',
      NODE_EXTRA_CA_CERTS: '/etc/tcab/extra-ca/ca.crt',
      TCAB_CA_BUNDLE: '/tmp/.tcab-ca/ca-certificates.crt',
      TCAB_LOG_LEVEL: 'info',
      baseUrls: { TCAB_BASE_URL_GG: 'http://stub.tcab:8080' },
    });
    expect(CREDENTIALS_MOUNT).toBe('/var/run/tcab/credentials');
  });

  it('every TCAB_ variable a Pod carries is the driver env schema\'s (or NATS\'s), each name once', () => {
    const pod = buildDriverPod(run, spec, { ...config, TCAB_DRIVER_EXTRA_CA: withCa.TCAB_DRIVER_EXTRA_CA }, ['ANTHROPIC_API_KEY']);
    const names = written(pod).map((e) => e.name);
    expect(new Set(names).size).toBe(names.length);
    const known = new Set(Object.keys(DriverEnvFields.shape));
    expect(names.filter((n) => n.startsWith('TCAB_') && !known.has(n) && !BASE_URL_VARIABLE.test(n) && !n.startsWith('TCAB_NATS_'))).toEqual([]);
  });

  it('a chart driver.env cannot override what the Run decides (run id, attempt, spec, run root); its other variables pass', () => {
    const hijack = dispatcherConfig({ TCAB_DRIVER_ENV: JSON.stringify({ TCAB_RUN_ID: 'other_run', TCAB_RUN_SPEC: '{}', TCAB_RUN_ROOT: '/elsewhere', TCAB_LOG_LEVEL: 'debug', HTTPS_PROXY: 'http://proxy:3128' }) });
    const env = literal(buildDriverPod(run, spec, hijack, []));
    expect(parseDriverEnv(env)).toMatchObject({ TCAB_RUN_ID: 'evals_fix-bug-17', TCAB_RUN_SPEC: spec, TCAB_RUN_ROOT: '/tmp/tcab', TCAB_LOG_LEVEL: 'debug' });
    expect(env.HTTPS_PROXY).toBe('http://proxy:3128');
  });

  it('driverEnvVars is typed by the schema: a value the driver would refuse is refused when the Pod is built', () => {
    expect(driverEnvVars({ TCAB_AWAIT_POD_START_SECONDS: 15, TCAB_LOG_LEVEL: 'debug' })).toEqual([{ name: 'TCAB_AWAIT_POD_START_SECONDS', value: '15' }, { name: 'TCAB_LOG_LEVEL', value: 'debug' }]);
    expect(() => driverEnvVars({ TCAB_RUN_ATTEMPT: 'uid\nX' })).toThrow(/not a run attempt/);
  });
});

describe('driver Pod placement (issue 35: TCAB_DRIVER_PLACEMENT)', () => {
  const placed = (placement: object, harnessSpec = spec) => buildDriverPod(run, harnessSpec, dispatcherConfig({ TCAB_DRIVER_PLACEMENT: JSON.stringify(placement) }), []).spec!;
  const nodeLost = (seconds: number) => [
    { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: seconds },
    { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: seconds },
  ];
  const spreadBy = (harness: string, over: object = {}) => [{ maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: { 'app.kubernetes.io/name': 'tcab-driver', 'tcab.dev/harness': harness } }, nodeTaintsPolicy: 'Honor', ...over }];
  const userDisk = { key: 'dedicated', operator: 'Equal', value: 'evals', effect: 'NoSchedule' };

  it.each([
    ['unset (the defaults): spread by harness over nodes, evicted 30 s after the node is lost, no nodeSelector', undefined, { tolerations: nodeLost(30), topologySpreadConstraints: spreadBy('claude') }],
    ['{} (the same defaults)', {}, { tolerations: nodeLost(30), topologySpreadConstraints: spreadBy('claude') }],
    ['nodeLostTolerationSeconds 0: evicted at once', { nodeLostTolerationSeconds: 0 }, { tolerations: nodeLost(0), topologySpreadConstraints: spreadBy('claude') }],
    ['the operator\'s tolerations kept, ours after them', { tolerations: [userDisk] }, { tolerations: [userDisk, ...nodeLost(30)], topologySpreadConstraints: spreadBy('claude') }],
    [
      'an operator toleration for node.kubernetes.io/unreachable replaces ours for that key only',
      { tolerations: [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 600 }] },
      { tolerations: [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 600 }, nodeLost(30)[0]], topologySpreadConstraints: spreadBy('claude') },
    ],
    [
      'one with no effect tolerates NoExecute too: it replaces ours',
      { tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists' }] },
      { tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists' }, nodeLost(30)[1]], topologySpreadConstraints: spreadBy('claude') },
    ],
    [
      'one of every taint (no key, Exists) replaces both',
      { tolerations: [{ operator: 'Exists' }] },
      { tolerations: [{ operator: 'Exists' }], topologySpreadConstraints: spreadBy('claude') },
    ],
    [
      'a NoSchedule one for the same key does not tolerate the NoExecute taint: ours stays',
      { tolerations: [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoSchedule' }] },
      { tolerations: [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoSchedule' }, ...nodeLost(30)], topologySpreadConstraints: spreadBy('claude') },
    ],
    ['spread off: no topologySpreadConstraints', { spread: { enabled: false } }, { tolerations: nodeLost(30) }],
    ['spread by zone, DoNotSchedule, maxSkew 2', { spread: { topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule', maxSkew: 2 } }, { tolerations: nodeLost(30), topologySpreadConstraints: spreadBy('claude', { topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule', maxSkew: 2 }) }],
    ['nodeSelector passed as given', { nodeSelector: { 'tcab.dev/pool': 'drivers', 'kubernetes.io/arch': 'amd64' } }, { nodeSelector: { 'tcab.dev/pool': 'drivers', 'kubernetes.io/arch': 'amd64' }, tolerations: nodeLost(30), topologySpreadConstraints: spreadBy('claude') }],
  ])('%s', (_, placement, want) => {
    const podSpec = placement === undefined ? buildDriverPod(run, spec, dispatcherConfig({}), []).spec! : placed(placement);
    expect({ nodeSelector: podSpec.nodeSelector, tolerations: podSpec.tolerations, topologySpreadConstraints: podSpec.topologySpreadConstraints }).toEqual({ nodeSelector: undefined, topologySpreadConstraints: undefined, ...want });
  });

  it('the spread selects the driver Pods of the Pod\'s own harness, which carry the labels it selects', () => {
    const gg = RunSpec.parse({ harness: 'gg', model: 'm', prompt: 'p' });
    const pod = buildDriverPod(run, gg, dispatcherConfig({}), []);
    const selector = pod.spec!.topologySpreadConstraints![0]!.labelSelector!.matchLabels!;
    expect(selector).toEqual({ 'app.kubernetes.io/name': 'tcab-driver', 'tcab.dev/harness': 'gg' });
    expect(pod.metadata!.labels).toMatchObject(selector);
  });
});

describe('attemptOfPod', () => {
  const pod = (label?: string): V1Pod => ({ metadata: { name: 'p', labels: label === undefined ? {} : { [ATTEMPT_LABEL]: label } } });
  it.each([
    ['1', 1], ['2', 2], ['11', 11], [undefined, undefined], ['0', undefined], ['01', undefined], ['-1', undefined], ['1e1', undefined], ['abc', undefined], ['100', undefined], ['', undefined],
  ] as const)('label %j -> %j', (label, expected) => {
    expect(attemptOfPod(pod(label))).toBe(expected);
  });
});
