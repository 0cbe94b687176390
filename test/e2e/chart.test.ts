// The chart and the examples, checked with the pinned tools: helm lint --strict, values.schema.json refusing a
// bad value by path, and kubeconform -strict on the rendered manifests and deploy/examples with schemas of the
// same Kubernetes version (from the test apiserver's OpenAPI, our CRDs included).
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse } from 'yaml';
import type { V1Deployment, V1Secret, V1Service } from '@kubernetes/client-node';
import { kubectl, runCaptured } from '../cluster/support.ts';
import { SCHEMA_LOCATION_TEMPLATE, writeKubeconformSchemas } from '../cluster/kubeconform-schemas.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const CHART = join(ROOT, 'charts', 'tcab');
const EXAMPLES = join(ROOT, 'deploy', 'examples');
let dir: string;
let schemas: string;

const tool = (name: string, args: string[], input?: string) => runCaptured(join(inject('clusterBinDir'), name), args, input);
const kubeconform = (files: string[], input?: string) => tool('kubeconform', ['-strict', '-summary', '-kubernetes-version', '1.37.2', '-schema-location', SCHEMA_LOCATION_TEMPLATE(schemas), ...files], input);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tcab-chart-'));
  schemas = join(dir, 'schemas');
  expect((await kubectl(['apply', '-f', join(ROOT, 'deploy', 'crds')])).code).toBe(0);
  await kubectl(['wait', '--for=condition=Established', 'crd/runs.tcab.dev', 'crd/harnessconfigs.tcab.dev', 'crd/evaluations.tcab.dev', '--timeout=30s']);
  const openapi = JSON.parse((await kubectl(['get', '--raw', '/openapi/v2'])).stdout);
  expect(writeKubeconformSchemas(openapi, schemas)).toBeGreaterThan(100);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('charts/tcab', () => {
  it('lints clean under --strict with its defaults and with every option on', async () => {
    expect(await tool('helm', ['lint', '--strict', CHART])).toMatchObject({ code: 0 });
    const all = await tool('helm', ['lint', '--strict', CHART, '--set', 'npmCache.enabled=true', '--set', 'nats.url=nats://nats.example:4222', '--set', 'nats.auth.enabled=false', '--set', 'nats.credentialsSecret=nats-creds', '--set', 'credentials.subscriptions.claude=claude-sub', '--set', 'driver.releaseStore.hostPath=/var/lib/tcab/releases', '--set-json', 'credentials.apiKeys=[{"env":"ANTHROPIC_API_KEY","secret":"keys","key":"anthropic"}]']);
    expect(all).toMatchObject({ code: 0 });
    const ownNats = await tool('helm', ['lint', '--strict', CHART, '--set', 'nats.url=nats://nats.example:4222', '--set', 'nats.auth.existingSecret=tcab-nats-keys']);
    expect(ownNats).toMatchObject({ code: 0 });
  });

  it('refuses a bad value with its path named', async () => {
    const bad = await tool('helm', ['template', 't', CHART, '--set-json', 'credentials.apiKeys=[{"env":"not a var","secret":"keys","key":"k"}]']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('/credentials/apiKeys/0/env');
  });

  it('passes dispatcher.logLevel to the dispatcher as TCAB_LOG_LEVEL and refuses a level pino does not know', async () => {
    const rendered = await tool('helm', ['template', 't', CHART, '--set', 'dispatcher.logLevel=debug', '--show-only', 'templates/deployment.yaml']);
    expect(rendered.code).toBe(0);
    expect(rendered.stdout).toMatch(/- name: TCAB_LOG_LEVEL\n\s+value: "debug"/);
    const bad = await tool('helm', ['template', 't', CHART, '--set', 'dispatcher.logLevel=verbose']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('/dispatcher/logLevel');
  });

  it('driver.otel: off (the default) renders nothing OpenTelemetry; on passes the endpoint in the driver env and the headers Secret by name only', async () => {
    const deployment = async (set: string[]) => {
      const rendered = await tool('helm', ['template', 't', CHART, '--show-only', 'templates/deployment.yaml', ...set]);
      expect(rendered.code, rendered.stderr).toBe(0);
      const env = (parse(rendered.stdout) as V1Deployment).spec!.template.spec!.containers[0]!.env!;
      return { text: rendered.stdout, env: Object.fromEntries(env.map((e) => [e.name, e.value])) };
    };
    const off = await deployment(['--set', 'driver.otel.endpoint=http://collector.example:4318', '--set', 'driver.otel.headersSecret.name=otel-headers']);
    expect(off.text).not.toMatch(/OTEL|otel-headers|collector\.example/);
    expect(JSON.parse(off.env.TCAB_DRIVER_ENV!)).toEqual({});
    const on = await deployment(['--set', 'driver.otel.enabled=true', '--set', 'driver.otel.endpoint=http://collector.example:4318', '--set', 'driver.otel.headersSecret.name=otel-headers', '--set-json', 'driver.env={"OTEL_SERVICE_NAME":"evals"}']);
    expect(JSON.parse(on.env.TCAB_DRIVER_ENV!)).toEqual({ OTEL_SERVICE_NAME: 'evals', TCAB_OTEL: '1', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector.example:4318' });
    expect(JSON.parse(on.env.TCAB_DRIVER_OTEL_HEADERS_SECRET!)).toEqual({ secret: 'otel-headers', key: 'headers' });
    // On without an endpoint or a headers Secret: exporting on, the endpoint left to OTEL_* in driver.env, no Secret.
    const bare = await deployment(['--set', 'driver.otel.enabled=true']);
    expect(JSON.parse(bare.env.TCAB_DRIVER_ENV!)).toEqual({ TCAB_OTEL: '1' });
    expect(bare.env).not.toHaveProperty('TCAB_DRIVER_OTEL_HEADERS_SECRET');
  });

  it('reads need a credential (issue 33): the read token Secret kept like the write token, mounted read-only and named in the env; /metrics on a port of its own', async () => {
    const render = async (set: string[], only: string[]) => {
      const rendered = await tool('helm', ['template', 't', CHART, ...only.flatMap((o) => ['--show-only', `templates/${o}`]), ...set]);
      expect(rendered.code, rendered.stderr).toBe(0);
      return rendered.stdout.split(/^---$/m).map((doc) => parse(doc)).filter(Boolean) as (V1Deployment | V1Secret | V1Service)[];
    };
    const [secret, deployment, service] = (await render([], ['read-token-secret.yaml', 'deployment.yaml', 'service.yaml'])) as [V1Secret, V1Deployment, V1Service];
    expect(secret.metadata).toMatchObject({ name: 't-tcab-read-token', annotations: { 'helm.sh/resource-policy': 'keep' } });
    expect(Buffer.from(secret.data!.token!, 'base64').toString()).toMatch(/^[A-Za-z0-9]{40}$/);
    const pod = deployment.spec!.template.spec!;
    const container = pod.containers[0]!;
    const env = Object.fromEntries(container.env!.map((e) => [e.name, e.value]));
    expect(env).toMatchObject({ TCAB_API_READ_TOKEN_FILE: '/var/run/tcab/read-token/token', TCAB_CONSOLE_AUTH_MODE: 'token', TCAB_CONSOLE_PROXY_USER_HEADER: 'X-Auth-Request-User', TCAB_CONSOLE_TRUSTED_CIDRS: '[]', TCAB_CONSOLE_SESSION_SECONDS: '43200', TCAB_METRICS_PORT: '9090' });
    expect(container.volumeMounts).toContainEqual({ name: 'read-token', mountPath: '/var/run/tcab/read-token', readOnly: true });
    // defaultMode 0440 is octal to the apiserver's YAML 1.1 (the yaml package reads it as decimal): as the write token's.
    expect(pod.volumes).toContainEqual({ name: 'read-token', secret: { secretName: 't-tcab-read-token', defaultMode: 440 } });
    expect(pod.volumes).toContainEqual({ name: 'api-token', secret: { secretName: 't-tcab-api-token', defaultMode: 440 } });
    expect(container.ports).toEqual([{ name: 'http', containerPort: 8080 }, { name: 'metrics', containerPort: 9090 }]);
    // The kubelet's probes stay on the API port, which answers them without a credential.
    expect([container.startupProbe!.httpGet!.port, container.livenessProbe!.httpGet!.port, container.readinessProbe!.httpGet!.port]).toEqual(['http', 'http', 'http']);
    // Liveness counts only once the startup probe passed (up to 3 minutes to start), then a minute of silence.
    expect(container.startupProbe).toMatchObject({ httpGet: { path: '/healthz' }, periodSeconds: 2, failureThreshold: 90 });
    expect(container.livenessProbe).toMatchObject({ periodSeconds: 10, timeoutSeconds: 5, failureThreshold: 6 });
    expect(service.spec!.ports).toEqual([{ name: 'http', port: 80, targetPort: 'http' }, { name: 'metrics', port: 9090, targetPort: 'metrics' }]);

    // An existing read token Secret: none rendered, that one mounted; another metrics port everywhere.
    const own = await render(['--set', 'console.auth.existingReadTokenSecret=my-read-token', '--set', 'dispatcher.metrics.port=9100'], ['deployment.yaml', 'service.yaml']);
    const ownPod = (own[0] as V1Deployment).spec!.template.spec!;
    expect(ownPod.volumes).toContainEqual({ name: 'read-token', secret: { secretName: 'my-read-token', defaultMode: 440 } });
    expect(ownPod.containers[0]!.ports).toContainEqual({ name: 'metrics', containerPort: 9100 });
    expect((own[1] as V1Service).spec!.ports).toContainEqual({ name: 'metrics', port: 9100, targetPort: 'metrics' });
    const none = await tool('helm', ['template', 't', CHART, '--set', 'console.auth.existingReadTokenSecret=my-read-token']);
    expect(none.stdout).not.toContain('t-tcab-read-token');

    // Proxy mode: the CIDRs are required (rendering fails without), passed as JSON with the header.
    const noCidrs = await tool('helm', ['template', 't', CHART, '--set', 'console.auth.mode=proxy']);
    expect(noCidrs.code).not.toBe(0);
    expect(noCidrs.stderr).toContain('console.auth.mode=proxy needs console.auth.proxy.trustedCIDRs');
    const proxy = await render(['--set', 'console.auth.mode=proxy', '--set', 'console.auth.proxy.userHeader=X-Forwarded-User', '--set-json', 'console.auth.proxy.trustedCIDRs=["10.42.0.0/16","fd00:42::/64"]'], ['deployment.yaml']);
    const proxyEnv = Object.fromEntries((proxy[0] as V1Deployment).spec!.template.spec!.containers[0]!.env!.map((e) => [e.name, e.value]));
    expect(proxyEnv).toMatchObject({ TCAB_CONSOLE_AUTH_MODE: 'proxy', TCAB_CONSOLE_PROXY_USER_HEADER: 'X-Forwarded-User' });
    expect(JSON.parse(proxyEnv.TCAB_CONSOLE_TRUSTED_CIDRS!)).toEqual(['10.42.0.0/16', 'fd00:42::/64']);
    // The schema refuses what is not a mode, a CIDR or a header name, by path.
    for (const [set, path] of [['console.auth.mode=closed', '/console/auth/mode'], ['console.auth.proxy.userHeader=X User', '/console/auth/proxy/userHeader'], ['dispatcher.metrics.port=0', '/dispatcher/metrics/port']] as const) {
      const bad = await tool('helm', ['template', 't', CHART, '--set', set]);
      expect(bad.code, set).not.toBe(0);
      expect(bad.stderr, set).toContain(path);
    }
    const badCidr = await tool('helm', ['template', 't', CHART, '--set-json', 'console.auth.proxy.trustedCIDRs=["10.42.0.0"]']);
    expect(badCidr.stderr).toContain('/console/auth/proxy/trustedCIDRs/0');
  });

  it('NOTES say how to get the read token and open the console with it, and warn in open mode', async () => {
    const notes = async (set: string[]) => {
      const out = await tool('helm', ['install', 't', CHART, '-n', 'tcab', '--dry-run=client', ...set]);
      expect(out.code, out.stderr).toBe(0);
      return out.stdout.slice(out.stdout.indexOf('NOTES:'));
    };
    const token = await notes([]);
    expect(token).toContain("kubectl get secret -n tcab t-tcab-read-token -o jsonpath='{.data.token}' | base64 -d");
    expect(token).toContain('http://127.0.0.1:8080/#token=$(kubectl get secret -n tcab t-tcab-read-token');
    expect(token).toContain('kubectl port-forward -n tcab svc/t-tcab-dispatcher 8080:80');
    expect(token).toContain('TCAB_API_READ_TOKEN=$(kubectl get secret -n tcab t-tcab-read-token');
    expect(token).not.toContain('WARNING');
    const open = await notes(['--set', 'console.auth.mode=open']);
    expect(open).toMatch(/WARNING: console\.auth\.mode is open: anyone who can reach/);
    const proxy = await notes(['--set', 'console.auth.mode=proxy', '--set-json', 'console.auth.proxy.trustedCIDRs=["10.42.0.0/16"]']);
    expect(proxy).toContain('X-Auth-Request-User, from 10.42.0.0/16 only');
  });

  it('renders manifests that kubeconform -strict accepts for Kubernetes 1.37.2, and catches a wrong field', async () => {
    const variants = [[], ['--set', 'console.auth.mode=proxy', '--set-json', 'console.auth.proxy.trustedCIDRs=["10.42.0.0/16"]', '--set', 'console.auth.existingReadTokenSecret=my-read-token'], ['--set', 'npmCache.enabled=true', '--set', 'nats.auth.enabled=false', '--set', 'nats.credentialsSecret=nats-creds'], ['--set', 'nats.url=nats://nats.example:4222', '--set', 'nats.auth.existingSecret=tcab-nats-keys'], ['--set', 'driver.otel.enabled=true', '--set', 'driver.otel.endpoint=http://collector.example:4318', '--set', 'driver.otel.headersSecret.name=otel-headers']];
    for (const set of variants) {
      const rendered = await tool('helm', ['template', 'tcab', CHART, '-n', 'tcab', '--include-crds', ...set]);
      expect(rendered.code).toBe(0);
      const file = join(dir, 'rendered.yaml');
      writeFileSync(file, rendered.stdout);
      const checked = await kubeconform([file]);
      expect(checked.stdout + checked.stderr).toMatch(/Invalid: 0, Errors: 0, Skipped: 0/);
      expect(checked.code).toBe(0);
    }
    const wrong = await kubeconform(['-'], 'apiVersion: apps/v1\nkind: Deployment\nmetadata: { name: x }\nspec: { replicas: 1, selectr: {}, template: {} }\n');
    expect(wrong.code).not.toBe(0);
    expect(wrong.stdout).toContain('selectr');
  });

  it('ships examples (Runs for several harnesses, a HarnessConfig, credential Secrets, an Evaluation) that validate', async () => {
    const files = readdirSync(EXAMPLES).filter((f) => f.endsWith('.yaml')).map((f) => join(EXAMPLES, f));
    expect(files.length).toBeGreaterThanOrEqual(7);
    expect(files.some((f) => f.endsWith('/evaluation-stub.yaml'))).toBe(true);
    const checked = await kubeconform(files);
    expect(checked.stdout + checked.stderr).toMatch(/Invalid: 0, Errors: 0, Skipped: 0/);
    // And the apiserver itself accepts them (server-side dry run against the CRDs).
    const dryRun = await kubectl(['apply', '--dry-run=server', '-n', 'default', ...files.flatMap((f) => ['-f', f])]);
    expect(dryRun.stderr).toBe('');
  });
});
