// The chart as users install it, on a cluster with a real node: the five images pushed to a registry the node
// pulls from, named only by values as a user names their own registry; the bundled NATS and the npm cache
// (Verdaccio) enabled, their volumes from the cluster's default StorageClass; extraCA = this machine's proxy CA; a
// stub model server in the cluster (a Deployment + Service of the driver image, driver/stub-models/serve.ts) that
// driver Pods reach through cluster DNS, as a real model gateway. One copy for test/e2e/helm-real-node.test.ts and
// `npm run bench -- e2e` (bench/run-latency.ts): no vitest here, everything comes in as arguments (the kubeconfig,
// the directory with kubectl and helm, the namespace, the images' refs).
import { execFile, spawn } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');
export const CHART = join(ROOT, 'charts', 'tcab');
export const RELEASE = 'tcab';
/** The stub model's ports in the cluster, one container per harness script (gg and claude always; the others when given). */
export const STUB_PORTS = { gg: 8080, claude: 8081, pi: 8082, grok: 8083, aider: 8084 } as const;
export type StubScripts = Record<'gg' | 'claude', object> & Partial<Record<keyof typeof STUB_PORTS, object>>;

/** Where the cluster is: its kubeconfig and the directory holding the pinned kubectl and helm. */
export interface ClusterAccess {
  kubeconfig: string;
  binDir: string;
}

export interface Captured {
  stdout: string;
  stderr: string;
  code: number;
}

async function captured(bin: string, args: string[], input?: string): Promise<Captured> {
  const child = exec(bin, args, { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (input !== undefined) child.child.stdin!.end(input);
  try {
    return { ...(await child), code: 0 };
  } catch (error) {
    const e = error as Captured;
    return { stdout: e.stdout, stderr: e.stderr, code: e.code };
  }
}

export const kubectlOf = (cluster: ClusterAccess) => (args: string[], input?: string) => captured(join(cluster.binDir, 'kubectl'), ['--kubeconfig', cluster.kubeconfig, ...args], input);
export const helmOf = (cluster: ClusterAccess) => (args: string[]) => captured(join(cluster.binDir, 'helm'), ['--kubeconfig', cluster.kubeconfig, ...args]);

/** This machine's extra CAs (the TLS-intercepting proxy's): what an operator behind such a proxy puts in extraCA. */
export function proxyCa(): string {
  const dir = '/usr/local/share/ca-certificates';
  const pems = readdirSync(dir).filter((f) => f.endsWith('.crt')).map((f) => readFileSync(join(dir, f), 'utf8').trim());
  if (pems.length === 0) throw new Error(`no extra CA in ${dir}`);
  return `${pems.join('\n')}\n`;
}

const splitImage = (ref: string) => ({ repository: ref.slice(0, ref.lastIndexOf(':')), tag: ref.slice(ref.lastIndexOf(':') + 1) });

/** The stub model Deployment + Service: the driver image running driver/stub-models/serve.ts, one container per wire. */
export function stubModels(namespace: string, image: string, scripts: StubScripts): object {
  const names = (Object.keys(STUB_PORTS) as (keyof typeof STUB_PORTS)[]).filter((name) => scripts[name] !== undefined);
  const container = (name: keyof typeof STUB_PORTS) => ({
    name,
    image,
    command: ['node', '/opt/tcab/driver/stub-models/serve.ts'],
    env: [{ name: 'TCAB_STUB_PORT', value: String(STUB_PORTS[name]) }, { name: 'TCAB_STUB_SCRIPT', value: JSON.stringify(scripts[name]) }],
    ports: [{ name, containerPort: STUB_PORTS[name] }],
    readinessProbe: { httpGet: { path: '/', port: STUB_PORTS[name] }, periodSeconds: 1 },
    resources: { requests: { cpu: '20m', memory: '64Mi' } },
    securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
  });
  const labels = { app: 'stub-models' };
  return {
    apiVersion: 'v1',
    kind: 'List',
    items: [
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'stub-models', namespace },
        spec: {
          replicas: 1,
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: {
              automountServiceAccountToken: false,
              securityContext: { runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, seccompProfile: { type: 'RuntimeDefault' } },
              containers: names.map(container),
            },
          },
        },
      },
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'stub-models', namespace }, spec: { selector: labels, ports: names.map((name) => ({ name, port: STUB_PORTS[name], targetPort: STUB_PORTS[name] })) } },
    ],
  };
}

/** The chart's values: the images from `images`, bundled NATS and npm cache, the provider key's Secret, extraCA. */
/** Provider key variables by the Secret key `installChart` stores each provider's key under. */
const KEY_VARIABLES: Record<string, string> = { anthropic: 'ANTHROPIC_API_KEY', openai: 'OPENAI_API_KEY', openrouter: 'OPENROUTER_API_KEY', xai: 'XAI_API_KEY' };

/**
 * @param gateway the chart's model gateway (its default is on). The suites that test other things install without
 *   it, so their gg and Claude Runs keep reaching each its own stub script directly; test/e2e/gateway-real-node.test.ts
 *   installs with it.
 */
export function chartValues(namespace: string, images: Record<string, string>, providerKeySecret: string, providers: readonly string[] = ['anthropic'], gateway = false, natsReplicas: 1 | 3 = 1): object {
  const stubUrl = (port: number) => `http://stub-models.${namespace}.svc.cluster.local:${port}`;
  return {
    dispatcher: { image: { ...splitImage(images.dispatcher!), pullPolicy: 'IfNotPresent' }, leaseDurationSeconds: 5 },
    driver: {
      image: splitImage(images.driver!),
      // Small requests: the node has 2 cores, shared with the dispatchers, NATS, Verdaccio and the stub.
      resources: { cpu: '250m', memory: '1536Mi' },
      env: Object.fromEntries(Object.entries(STUB_PORTS).map(([slug, port]) => [`TCAB_BASE_URL_${slug.toUpperCase()}`, stubUrl(port)])),
    },
    nats: { url: '', auth: { enabled: true, existingSecret: '' }, credentialsSecret: '', bundled: { enabled: true, image: { ...splitImage(images.nats!), pullPolicy: 'IfNotPresent' }, storage: '1Gi', replicas: natsReplicas } },
    npmCache: { enabled: true, image: { ...splitImage(images['npm-cache']!), pullPolicy: 'IfNotPresent' }, storage: '5Gi', upstream: 'https://registry.npmjs.org/' },
    egress: { proxy: { image: { ...splitImage(images['egress-proxy']!), pullPolicy: 'IfNotPresent' } } },
    // The chart's NetworkPolicies stay on (its default); the one thing this install adds, as an operator with a model
    // gateway in the cluster would: driver Pods may reach the stub models' Pods on their ports.
    // The model gateway serves the runs from the stub models: Claude's wire (anthropic) and gg's (openai). The gateway
    // Pod may reach the stubs' Pods; the drivers keep their own rule for the harnesses whose key stays in the harness.
    gateway: { enabled: gateway, upstreams: { anthropic: stubUrl(STUB_PORTS.claude), openai: stubUrl(STUB_PORTS.gg) } },
    networkPolicy: {
      driverEgress: [{ to: [{ podSelector: { matchLabels: { app: 'stub-models' } } }], ports: Object.values(STUB_PORTS).map((port) => ({ protocol: 'TCP', port })) }],
      gatewayEgress: [{ to: [{ podSelector: { matchLabels: { app: 'stub-models' } } }], ports: Object.values(STUB_PORTS).map((port) => ({ protocol: 'TCP', port })) }],
    },
    credentials: { apiKeys: providers.map((key) => ({ env: KEY_VARIABLES[key]!, secret: providerKeySecret, key })), subscriptions: {} },
    extraCA: { certificates: proxyCa(), existingConfigMap: '', key: 'ca.crt' },
  };
}

export interface InstallOptions {
  namespace: string;
  /** driver, dispatcher, nats, npm-cache, egress-proxy: refs as Pods name them (real-node-context.ts pushImages). */
  images: Record<string, string>;
  /** The provider key the Secret `provider-keys` holds (a fake: the models are stubs). */
  providerKey: string;
  /** More keys for that Secret, by provider (openai); the anthropic one is providerKey. */
  providerKeys?: Record<string, string>;
  /** Install with the model gateway (the chart's default; off for the suites that test other things). */
  gateway?: boolean;
  /** The bundled NATS's servers: 1 (the default) or a JetStream cluster of 3. */
  natsReplicas?: 1 | 3;
  stubScripts: StubScripts;
  /** Values over the suite's (a second `-f` file: helm merges maps, replaces lists), e.g. { dispatcher: { replicas: 2 } }. */
  overrides?: object;
  /** Where values.json is written. */
  workDir: string;
  timeoutSeconds: number;
}

/**
 * As an operator would, in an existing namespace: the provider key's Secret, the stub models, `helm install
 * --wait` (everything Ready), then the stub models Ready. Returns helm's output (the caller checks it and NOTES).
 */
export async function installChart(cluster: ClusterAccess, options: InstallOptions): Promise<Captured> {
  const kubectl = kubectlOf(cluster);
  const must = async (what: string, out: Promise<Captured>) => {
    const done = await out;
    if (done.code !== 0) throw new Error(`${what}: ${done.stderr}`);
  };
  const keys = { anthropic: options.providerKey, ...options.providerKeys };
  await must('provider key Secret', kubectl(['create', 'secret', 'generic', 'provider-keys', '-n', options.namespace, ...Object.entries(keys).map(([provider, key]) => `--from-literal=${provider}=${key}`)]));
  await must('stub models', kubectl(['apply', '-f', '-'], JSON.stringify(stubModels(options.namespace, options.images.driver!, options.stubScripts))));
  const valuesFile = join(options.workDir, 'values.json');
  writeFileSync(valuesFile, JSON.stringify(chartValues(options.namespace, options.images, 'provider-keys', Object.keys(keys), options.gateway ?? false, options.natsReplicas ?? 1)));
  const overridesFile = join(options.workDir, 'overrides.json');
  writeFileSync(overridesFile, JSON.stringify(options.overrides ?? {}));
  const install = await helmOf(cluster)(['install', RELEASE, CHART, '-n', options.namespace, '-f', valuesFile, '-f', overridesFile, '--wait', '--timeout', `${options.timeoutSeconds}s`]);
  if (install.code !== 0) return install;
  await must('stub models Ready', kubectl(['rollout', 'status', 'deployment/stub-models', '-n', options.namespace, `--timeout=${options.timeoutSeconds}s`]));
  return install;
}

/** The auth Secret the dispatcher created at its first start (bundle.json, auth.conf, reader.creds). */
export const NATS_AUTH_SECRET = `${RELEASE}-tcab-nats-auth`;

/**
 * The read-only NATS credential an operator hands to `tcab events` (NOTES.txt says how): the auth Secret's
 * reader.creds, written to `file` (0600). Its content is never logged.
 */
export async function writeReaderCreds(cluster: ClusterAccess, namespace: string, file: string): Promise<string> {
  const out = await kubectlOf(cluster)(['get', 'secret', NATS_AUTH_SECRET, '-n', namespace, '-o', 'jsonpath={.data.reader\\.creds}']);
  if (out.code !== 0 || !out.stdout) throw new Error(`reader.creds of Secret ${NATS_AUTH_SECRET}: ${out.stderr || 'empty'}`);
  writeFileSync(file, Buffer.from(out.stdout, 'base64'), { mode: 0o600 });
  return file;
}

/**
 * `kubectl port-forward svc/<service> :<port>`: a free port on the host's 127.0.0.1 forwarded to one of the
 * Service's Pods (through the apiserver and the node's kubelet). Resolves once kubectl says it is forwarding; fails
 * when kubectl exits first or after `timeoutMs`.
 */
export async function forwardService(cluster: ClusterAccess, namespace: string, service: string, port: number, timeoutMs = 60_000, kind: 'svc' | 'pod' = 'svc'): Promise<{ address: string; close: () => void }> {
  const child = spawn(join(cluster.binDir, 'kubectl'), ['--kubeconfig', cluster.kubeconfig, 'port-forward', '-n', namespace, `${kind}/${service}`, `:${port}`, '--address', '127.0.0.1'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const close = () => void child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  try {
    const local = await new Promise<number>((resolve, reject) => {
      let out = '';
      timer = setTimeout(() => reject(new Error(`kubectl port-forward ${kind}/${service}: not forwarding after ${timeoutMs} ms: ${out}`)), timeoutMs);
      const seen = (d: Buffer) => {
        out += d.toString();
        const m = /Forwarding from 127\.0\.0\.1:(\d+) ->/.exec(out);
        if (m) resolve(Number(m[1]));
      };
      child.stdout.on('data', seen);
      child.stderr.on('data', seen);
      child.on('exit', (code) => reject(new Error(`kubectl port-forward ${kind}/${service} exited ${code}: ${out}`)));
    });
    return { address: `127.0.0.1:${local}`, close };
  } catch (error) {
    close();
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
