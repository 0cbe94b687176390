// The chart and the examples, checked with the pinned tools: helm lint --strict, values.schema.json refusing a
// bad value by path, and kubeconform -strict on the rendered manifests and deploy/examples with schemas of the
// same Kubernetes version (from the test apiserver's OpenAPI, our CRDs included).
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse } from 'yaml';
import type { V1Deployment } from '@kubernetes/client-node';
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
  await kubectl(['wait', '--for=condition=Established', 'crd/runs.tcab.dev', 'crd/harnessconfigs.tcab.dev', '--timeout=30s']);
  const openapi = JSON.parse((await kubectl(['get', '--raw', '/openapi/v2'])).stdout);
  expect(writeKubeconformSchemas(openapi, schemas)).toBeGreaterThan(100);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('charts/tcab', () => {
  it('lints clean under --strict with its defaults and with every option on', async () => {
    expect(await tool('helm', ['lint', '--strict', CHART])).toMatchObject({ code: 0 });
    const all = await tool('helm', ['lint', '--strict', CHART, '--set', 'npmCache.enabled=true', '--set', 'nats.url=nats://nats.example:4222', '--set', 'nats.auth.enabled=false', '--set', 'nats.credentialsSecret=nats-creds', '--set', 'credentials.subscriptions.claude=claude-sub', '--set-json', 'credentials.apiKeys=[{"env":"ANTHROPIC_API_KEY","secret":"keys","key":"anthropic"}]']);
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

  it('renders manifests that kubeconform -strict accepts for Kubernetes 1.37.2, and catches a wrong field', async () => {
    const variants = [[], ['--set', 'npmCache.enabled=true', '--set', 'nats.auth.enabled=false', '--set', 'nats.credentialsSecret=nats-creds'], ['--set', 'nats.url=nats://nats.example:4222', '--set', 'nats.auth.existingSecret=tcab-nats-keys'], ['--set', 'driver.otel.enabled=true', '--set', 'driver.otel.endpoint=http://collector.example:4318', '--set', 'driver.otel.headersSecret.name=otel-headers']];
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

  it('ships examples (Runs for several harnesses, a HarnessConfig, credential Secrets) that validate', async () => {
    const files = readdirSync(EXAMPLES).filter((f) => f.endsWith('.yaml')).map((f) => join(EXAMPLES, f));
    expect(files.length).toBeGreaterThanOrEqual(6);
    const checked = await kubeconform(files);
    expect(checked.stdout + checked.stderr).toMatch(/Invalid: 0, Errors: 0, Skipped: 0/);
    // And the apiserver itself accepts them (server-side dry run against the CRDs).
    const dryRun = await kubectl(['apply', '--dry-run=server', '-n', 'default', ...files.flatMap((f) => ['-f', f])]);
    expect(dryRun.stderr).toBe('');
  });
});
