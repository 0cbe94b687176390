// The driver Pod for a claimed Run, built as data (pure). Deterministic name + owner reference to the Run, so a
// dispatcher that dies between claim and create never makes two Pods (the second create gets 409) and deleting
// the Run garbage-collects its Pod.
// Two identities, as on a workstation (`sudo tcab run`): the driver is uid 0 and hands the run to the run user
// (uid/gid 1000, driver/run-user.ts), which runs the harness with no capabilities. So the harness and whatever it
// starts cannot read the driver's environment or memory (/proc/<pid>/environ, /mem: the kernel's ptrace access
// check, uids differ), signal it (EPERM), or read the root-only Secrets mounted for the driver (NATS creds, the
// subscription files it copies into the run's HOME). The driver's root is narrow: every capability dropped except
// DRIVER_CAPABILITIES (below, each one's reason), no privilege escalation (no_new_privs still lets root setuid
// down, and nothing the harness execs can gain a capability), RuntimeDefault seccomp, a read-only root
// filesystem (HOME, the run root, npm's cache and installs are all under /tmp, an emptyDir), no service-account
// token (the driver holds no Kubernetes credentials), no fsGroup (it would make the root-only Secret files
// readable by group 1000, the run user's group).
// API keys come by secretKeyRef, or, through the cluster's model gateway, a per-run token in their place and no key at
// all; a harness's subscription Secret is mounted read-only (root only), keyed by basename.
// The driver's own variables are written through the driver env schema (shared/driver-env.ts), which the driver
// decodes: a renamed or retyped variable breaks this file's build, not a Pod at run time.
import type { V1Container, V1EnvVar, V1HostAlias, V1ObjectMeta, V1Pod, V1PodSpec, V1Toleration, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import { runLifetimeSeconds } from '../../shared/run.ts';
import type { RunSpec } from '../../shared/run.ts';
import type { DispatcherConfig } from '../config.ts';
import { runSubjects } from '../../nats/envelope.ts';
import { runInboxPrefix } from '../../nats/auth/index.ts';
import { RUN_ID_GRAMMAR, clusterRunIdOf } from '../../shared/run-id.ts';
import { InvalidInputError } from '../../shared/errors.ts';
import { API_VERSION, GROUP } from '../../shared/api-group.ts';
import { CREDENTIALS_MOUNT, encodeDriverEnv } from '../../shared/driver-env.ts';
import type { DriverEnvValues } from '../../shared/driver-env.ts';
import { GATEWAY_PROVIDER_VARIABLE, GATEWAY_URL_VARIABLE } from '../../shared/gateway.ts';
import { NODE_LOST_TAINTS, toleratesNoExecute } from '../../shared/driver-placement.ts';
import type { DriverPlacement } from '../../shared/driver-placement.ts';
import { EGRESS_LABEL, matchesNoProxy, proxyEnv } from './egress.ts';
import { EGRESS_ANNOTATION } from '../../kube/resources.ts';
import type { RunEgressPlan } from './egress.ts';

export { CREDENTIALS_MOUNT };
export const RUN_LABEL = `${GROUP}/run`;
export const HARNESS_LABEL = `${GROUP}/harness`;
/** The run root on the Pod's scratch volume (the root filesystem is read-only). */
export const POD_RUN_ROOT = '/tmp/tcab';
/** Where driver Pods find the chart's extra CA (the same path the dispatcher and npm-cache Pods use). */
export const EXTRA_CA_DIR = '/etc/tcab/extra-ca';
export const EXTRA_CA_PATH = `${EXTRA_CA_DIR}/ca.crt`;
/**
 * The system CAs plus the extra ones, written by the driver at start (driver/extra-ca.ts) on its scratch volume:
 * the file non-Node tools read. Their variables replace the system bundle rather than add to it, so they must
 * name a merged file, which only the running container can make (the image's bundle is not the chart's to read).
 */
export const CA_BUNDLE_PATH = '/tmp/.tcab-ca/ca-certificates.crt';
/** OpenSSL (curl, python's ssl, wget), git (GnuTLS on Debian), python requests, curl's own, pip. */
export const CA_BUNDLE_VARIABLES = ['SSL_CERT_FILE', 'GIT_SSL_CAINFO', 'REQUESTS_CA_BUNDLE', 'CURL_CA_BUNDLE', 'PIP_CERT'] as const;
/** Where the run's NATS credential (the Secret `natsCredsSecret`, key nats.creds) is mounted: root-only (0400). */
export const NATS_CREDS_DIR = '/var/run/tcab/nats';
export const NATS_CREDS_PATH = `${NATS_CREDS_DIR}/nats.creds`;
/** Where the npm cache's install credential is mounted: root-only (0400), like the NATS credential. */
export const NPM_AUTH_DIR = '/var/run/tcab/npm';
export const NPM_AUTH_PATH = `${NPM_AUTH_DIR}/auth`;
/**
 * Where the node's release-store directory (a hostPath) is mounted in driver Pods: the store in releases/, each
 * run's install prefix in prefixes/. One mount for both, because a root driver hard-links a stored release into the
 * prefix (link(2) never crosses a mount: a prefix in the Pod's emptyDir costs each run a copy of the release).
 */
export const NODE_CACHE_MOUNT = '/var/cache/tcab';
export const RELEASE_STORE_MOUNT = `${NODE_CACHE_MOUNT}/releases`;
export const PREFIX_ROOT_MOUNT = `${NODE_CACHE_MOUNT}/prefixes`;

/**
 * The capabilities the driver (uid 0) keeps; everything else is dropped. Each one measured on the real node by
 * running a gg run (test case, a daemon left behind, a deadline) in a Pod without it:
 *   SETUID, SETGID  spawn every child as the run user (libuv: setgroups([]), setgid, setuid); without: exit 3.
 *   CHOWN           hand the run's directories, the npm cache, credentials and files it writes to the run user;
 *                   without: `EPERM ... lchown '/tmp/tcab/runs/<run>/home'`.
 *   DAC_OVERRIDE    act inside the run user's 0700 HOME and workspace: a child's chdir there happens before it
 *                   drops to the run user (without: `spawn /usr/local/bin/node EACCES` at probe_harness),
 *                   credentials and config copied in, usage reports read, the run's directories removed.
 *   FOWNER          remove or replace the run user's files in a directory it made sticky (chmod +t): the kernel
 *                   allows that to the file's or the directory's owner or CAP_FOWNER only (teardown would fail).
 *   KILL            signal the run user's process group: SIGTERM at the deadline or on cancel. Without it the
 *                   harness never learns it must stop (gg "exited with code null and printed nothing", its usage
 *                   lost) and only the leftover scan at teardown kills it.
 * Not SYS_PTRACE (not in the Pod Security Standards' baseline): the leftover scan, which must read the run user's
 * /proc/<pid>/environ, runs as the run user instead (driver/leftovers.ts).
 */
export const DRIVER_CAPABILITIES = ['CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'KILL', 'SETGID', 'SETUID'] as const;


export interface RunRef {
  namespace: string;
  name: string;
  uid: string;
  /** Which attempt of the Run (status.attempts): 1 (the default) for the first; each has its own Pod. */
  attempt?: number;
}

export const ATTEMPT_LABEL = `${GROUP}/attempt`;

/** The attempt a driver Pod is of, from its label (undefined for a Pod without one or with one no attempt has). */
export function attemptOfPod(pod: V1Pod): number | undefined {
  const label = pod.metadata?.labels?.[ATTEMPT_LABEL];
  return label !== undefined && /^[1-9][0-9]?$/.test(label) ? Number(label) : undefined;
}

/**
 * The attempt's id in NATS message ids, gateway tokens and per-run credentials: the Run's uid for the first attempt
 * (as before attempts existed), `<uid>-<n>` for attempt n after it. A Run re-created under its name has another uid.
 */
export function attemptId(run: RunRef): string {
  const n = run.attempt ?? 1;
  return n === 1 ? run.uid : `${run.uid}-${n}`;
}

/** Pod names are derived from the Run: one Run, one name, whoever creates it. */
export function driverPodName(run: RunRef): string {
  const base = `tcab-run-${run.name}`.toLowerCase().replace(/[^a-z0-9-]/g, '-');
  // Attempt n after the first: its own Pod, `-a<n>` at the end (the first keeps the name it always had).
  const suffix = (run.attempt ?? 1) > 1 ? `-a${run.attempt}` : '';
  return base.length + suffix.length <= 63 ? `${base}${suffix}` : `${base.slice(0, 54 - suffix.length)}-${run.uid.replace(/-/g, '').slice(0, 8)}${suffix}`;
}

/**
 * The id a run has in NATS subjects, events and its driver's directories: `<namespace>_<name with . as _>`
 * (clusterRunIdOf: injective, so two Runs never share a stream). Throws (InvalidInputError naming metadata.name)
 * when the name is too long for the run id grammar; the dispatcher refuses such a Run before claiming it.
 */
export function clusterRunId(run: RunRef): string {
  const id = clusterRunIdOf(run.namespace, run.name);
  if (id === undefined) throw new InvalidInputError('metadata.name', clusterRunIdProblem(run));
  return id;
}

/** Why a Run cannot have a run id (its namespace and name together are too long), for its status message. */
export function clusterRunIdProblem(run: Pick<RunRef, 'namespace' | 'name'>): string {
  return `"${run.namespace}/${run.name}" cannot be a run id: "<namespace>_<name>" must be ${RUN_ID_GRAMMAR} (this one has ${run.namespace.length + 1 + run.name.length}); use a shorter name`;
}

export function eventsSubject(run: RunRef): string {
  return runSubjects(clusterRunId(run));
}

/** How long a driver holds its NATS messages for the Pod's start_container event (a failover takes ~5 s). */
export const AWAIT_POD_START_SECONDS = 15;

/** The driver's variables for typed values, encoded as the driver decodes them (only those given). */
export function driverEnvVars(values: DriverEnvValues): V1EnvVar[] {
  return Object.entries(encodeDriverEnv(values)).map(([name, value]) => ({ name, value }));
}

/** The Secret key holding a run's gateway token (auth/gateway-tokens.ts makes the Secret). */
export const GATEWAY_TOKEN_KEY = 'token';
/** On a driver Pod whose key goes through the cluster's gateway: the provider (what a revocation is owed for). */
export const GATEWAY_LABEL = `${GROUP}/gateway`;

/** A Run whose key goes through the cluster's gateway (pods/gateway-plan.ts): its token and where the gateway is. */
export interface PodGateway {
  /** The Secret (key `token`) holding the run's token. */
  tokenSecret: string;
  /** The gateway's URL (TCAB_GATEWAY_URL). */
  url: string;
  /** The gateway provider the key is for (`<url>/p/<provider>`). */
  provider: string;
  /** The variable the harness's auth reads its key from: the token goes there. */
  keyVar: string;
}

export interface DriverPodInput {
  /** The Secret (key nats.creds) holding this run's NATS user, minted by the dispatcher; unset: no credential file. */
  natsCredsSecret?: string;
  /** The run's egress profile and proxy (egress.ts decideEgress); unset: the install defines no profiles. */
  egress?: RunEgressPlan;
  /**
   * With TCAB_DRIVER_DNS=hosts: the names the run needs and their addresses (egress.ts namesToResolve, resolved by
   * the dispatcher); the Pod gets no DNS server at all.
   */
  hostAliases?: V1HostAlias[];
  /** The key goes through the cluster's gateway: the token instead of any provider key. */
  gateway?: PodGateway;
}

/**
 * No DNS in a driver Pod (TCAB_DRIVER_DNS=hosts): its resolver asks 127.0.0.1, where nothing answers, so a lookup
 * fails at once (connection refused) instead of telling an agent every Service and Pod name of the cluster; the
 * names the run needs come from /etc/hosts (hostAliases). Names outside the cluster are resolved by the egress proxy.
 */
export const NO_DNS: Pick<V1PodSpec, 'dnsPolicy' | 'dnsConfig'> = { dnsPolicy: 'None', dnsConfig: { nameservers: ['127.0.0.1'], searches: [], options: [{ name: 'ndots', value: '1' }, { name: 'attempts', value: '1' }, { name: 'timeout', value: '1' }] } };

/** What every driver Pod carries: its name label (the harness label is HARNESS_LABEL). */
export const DRIVER_NAME_LABEL = { 'app.kubernetes.io/name': 'tcab-driver' } as const;

/**
 * Where a driver Pod of `harness` runs (TCAB_DRIVER_PLACEMENT, shared/driver-placement.ts): the operator's
 * nodeSelector and tolerations, a spread over nodes among the driver Pods of the same harness, and how long it stays
 * on a node that is lost.
 *
 * The node-lost tolerations: without them the apiserver's DefaultTolerationSeconds admission gives every Pod
 * not-ready and unreachable NoExecute tolerations of 300 s, so a Run whose node died would wait 5 minutes before the
 * taint manager evicts its Pod (DeletionByTaintManager) and the dispatcher tries it again (status/retry.ts, NodeLost).
 * Ours say nodeLostTolerationSeconds instead. An operator toleration that already tolerates one of those taints (the
 * same key, or every key, with effect NoExecute or any) wins: ours for that key is left out, not added next to it
 * (the taint manager would take the shorter of the two).
 */
export function driverPlacement(harness: string, placement: DriverPlacement): Pick<V1PodSpec, 'nodeSelector' | 'tolerations' | 'topologySpreadConstraints'> {
  const own: V1Toleration[] = placement.tolerations.map((t) => ({ ...t }));
  const nodeLost: V1Toleration[] = NODE_LOST_TAINTS.filter((key) => !placement.tolerations.some((t) => toleratesNoExecute(t, key))).map((key) => ({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: placement.nodeLostTolerationSeconds }));
  const tolerations = [...own, ...nodeLost];
  const { spread } = placement;
  return {
    ...(Object.keys(placement.nodeSelector).length > 0 ? { nodeSelector: { ...placement.nodeSelector } } : {}),
    ...(tolerations.length > 0 ? { tolerations } : {}),
    ...(spread.enabled
      ? {
          topologySpreadConstraints: [
            {
              maxSkew: spread.maxSkew,
              topologyKey: spread.topologyKey,
              whenUnsatisfiable: spread.whenUnsatisfiable,
              labelSelector: { matchLabels: { ...DRIVER_NAME_LABEL, [HARNESS_LABEL]: harness } },
              // Nodes whose taints a driver Pod does not tolerate (a control plane's) are no domain of the spread:
              // counted, their zero Pods would hold every other node to maxSkew under DoNotSchedule.
              nodeTaintsPolicy: 'Honor',
            },
          ],
        }
      : {}),
  };
}

/** The egress plan with `host` in its NO_PROXY unless already covered. */
function withDirectHost(plan: RunEgressPlan | undefined, host: string | undefined): RunEgressPlan | undefined {
  if (!plan || !host || matchesNoProxy(host, plan.noProxy)) return plan;
  return { ...plan, noProxy: [...plan.noProxy, host] };
}

/**
 * @param keyVars the variables this harness reads a key from (apiKeySources): only those Secrets are referenced,
 *   so a Claude run's Pod never carries the OpenAI key.
 */
export function buildDriverPod(run: RunRef, spec: RunSpec, config: DispatcherConfig, keyVars: readonly string[], input: DriverPodInput = {}): V1Pod {
  // The variables first: a Run without a run id (clusterRunId) throws before anything else is built.
  const env = driverEnv(run, spec, config, keyVars, input);
  const { volumes, mounts } = driverVolumes(spec, config, input.natsCredsSecret);
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: driverPodMetadata(run, spec, input),
    spec: {
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      ...driverScheduling(spec, config, input.hostAliases),
      securityContext: { seccompProfile: { type: 'RuntimeDefault' } },
      containers: [driverContainer(config, env, mounts)],
      volumes,
    },
  };
}

/** The Pod's name, labels (what NetworkPolicies, the spread and the dispatcher select), egress annotation and owner. */
function driverPodMetadata(run: RunRef, spec: RunSpec, input: DriverPodInput): V1ObjectMeta {
  const { egress, gateway } = input;
  return {
    name: driverPodName(run),
    namespace: run.namespace,
    labels: { ...DRIVER_NAME_LABEL, 'app.kubernetes.io/managed-by': 'tcab-dispatcher', [RUN_LABEL]: run.name, [ATTEMPT_LABEL]: String(run.attempt ?? 1), [HARNESS_LABEL]: spec.harness, ...(egress ? { [EGRESS_LABEL]: egress.egress.profile } : {}), ...(gateway ? { [GATEWAY_LABEL]: gateway.provider } : {}) },
    ...(egress ? { annotations: { [EGRESS_ANNOTATION]: JSON.stringify(egress.egress) } } : {}),
    ownerReferences: [{ apiVersion: API_VERSION, kind: 'Run', name: run.name, uid: run.uid, controller: true, blockOwnerDeletion: true }],
  };
}

/** Where and how long the Pod runs: its DNS (none with TCAB_DRIVER_DNS=hosts), its placement, its deadlines. */
function driverScheduling(spec: RunSpec, config: DispatcherConfig, hostAliases: V1HostAlias[] | undefined): Partial<V1PodSpec> {
  return {
    ...(config.TCAB_DRIVER_DNS === 'hosts' ? { ...NO_DNS, hostAliases: hostAliases ?? [] } : {}),
    ...driverPlacement(spec.harness, config.TCAB_DRIVER_PLACEMENT),
    // The driver's own deadline is the run's; the Pod gets a margin for install and teardown reporting.
    activeDeadlineSeconds: runLifetimeSeconds(spec) + 120,
    terminationGracePeriodSeconds: 30,
  };
}

/** The one container: the driver, as uid 0 with only DRIVER_CAPABILITIES and a read-only root filesystem. */
function driverContainer(config: DispatcherConfig, env: V1EnvVar[], mounts: V1VolumeMount[]): V1Container {
  return {
    name: 'driver',
    image: config.TCAB_DRIVER_IMAGE,
    env,
    resources: { requests: { cpu: config.TCAB_DRIVER_CPU, memory: config.TCAB_DRIVER_MEMORY }, limits: { memory: config.TCAB_DRIVER_MEMORY } },
    securityContext: {
      runAsUser: 0,
      runAsGroup: 0,
      runAsNonRoot: false,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'], add: [...DRIVER_CAPABILITIES] },
    },
    volumeMounts: mounts,
  };
}

/**
 * The driver's environment, in this order: the variables the Run decides, the operator's extra ones it does not,
 * the provider keys, the egress proxy, the Secret references, the extra CA's.
 */
function driverEnv(run: RunRef, spec: RunSpec, config: DispatcherConfig, keyVars: readonly string[], input: DriverPodInput): V1EnvVar[] {
  const { gateway } = input;
  const env = runEnv(run, spec, config, input);
  // The operator's extra driver variables (the chart's driver.env, its npm cache), as given, except the ones this
  // Pod's Run decides (its id, attempt, spec...): a chart value must not turn one Run's Pod into another's.
  const ours = new Set(env.map((e) => e.name));
  env.push(...Object.entries(config.TCAB_DRIVER_ENV).filter(([name]) => !ours.has(name)).map(([name, value]) => ({ name, value })));
  // With the gateway no provider key is referenced at all, not even another variable of the same harness: the key
  // never enters the Pod, so nothing in it (the agent included) can read it.
  if (!gateway) env.push(...config.TCAB_API_KEY_SECRETS.filter((ref) => keyVars.includes(ref.env)).map((ref) => ({ name: ref.env, valueFrom: { secretKeyRef: { name: ref.secret, key: ref.key, optional: true } } })));
  // The profile's proxy, over any proxy in the chart's driver.env: the NetworkPolicy lets this Pod reach that one.
  // The gateway is reached directly (the driver Pod's NetworkPolicy allows it; the egress proxy does not reach into
  // the cluster), so its host is in NO_PROXY even when the install's noProxy does not cover it.
  const proxy = proxyEnv(withDirectHost(input.egress, gateway && new URL(gateway.url).hostname));
  if (proxy.length > 0) {
    const names = new Set(proxy.map((e) => e.name));
    for (let i = env.length - 1; i >= 0; i--) if (names.has(env[i]!.name)) env.splice(i, 1);
    env.push(...proxy);
  }
  env.push(...secretRefEnv(config));
  // NODE_EXTRA_CA_CERTS adds to Node's bundled CAs (the driver, npm and Node-based harnesses). The others replace
  // the system bundle, so they name the merged one the driver writes from TCAB_CA_BUNDLE before it starts anything
  // (git for test cases, curl, python in a harness's tools). The CA itself is mounted by driverVolumes.
  if (config.TCAB_DRIVER_EXTRA_CA) {
    env.push(...driverEnvVars({ NODE_EXTRA_CA_CERTS: EXTRA_CA_PATH, TCAB_CA_BUNDLE: CA_BUNDLE_PATH }));
    // Not the driver's: its children inherit them (driver/child-env.ts).
    for (const name of CA_BUNDLE_VARIABLES) env.push({ name, value: CA_BUNDLE_PATH });
  }
  return env;
}

/** The variables the Run decides: its id, attempt and spec, where NATS is, its own credentials, its gateway. */
function runEnv(run: RunRef, spec: RunSpec, config: DispatcherConfig, input: DriverPodInput): V1EnvVar[] {
  const runId = clusterRunId(run);
  const env: V1EnvVar[] = [
    ...driverEnvVars({
      TCAB_RUN_ID: runId,
      // The run id is `<ns>_<name>`, the same for a Run re-created under its name and for each of its attempts; the
      // attempt id (its uid, with the attempt number after the first) tells them apart in every message id.
      TCAB_RUN_ATTEMPT: attemptId(run),
      TCAB_RUN_ATTEMPT_NUMBER: run.attempt ?? 1,
      TCAB_RUN_ATTEMPTS: spec.retries + 1,
      TCAB_RUN_SPEC: spec,
      TCAB_CREDENTIALS_DIR: CREDENTIALS_MOUNT,
      TCAB_RUN_ROOT: POD_RUN_ROOT,
      // The node's release store when the install has one (a hostPath volume); a store in the Pod's own emptyDir
      // would only cost each run the copy.
      TCAB_RELEASE_STORE: config.TCAB_DRIVER_RELEASE_STORE ? RELEASE_STORE_MOUNT : 'off',
      ...(config.TCAB_DRIVER_RELEASE_STORE ? { TCAB_PREFIX_ROOT: PREFIX_ROOT_MOUNT } : {}),
      // The driver holds its NATS messages until this dispatcher's start_container event for the Pod is on the
      // stream, so subscribers see pull -> start -> install in that order; long enough to ride out a failover.
      TCAB_AWAIT_POD_START_SECONDS: AWAIT_POD_START_SECONDS,
    }),
    { name: 'TCAB_NATS_URL', value: config.TCAB_DRIVER_NATS_URL ?? config.TCAB_NATS_URL },
  ];
  // The run's own NATS user (the file is root-only, driverVolumes) and the only inbox prefix its permissions allow.
  if (input.natsCredsSecret) env.push({ name: 'TCAB_NATS_CREDS', value: NATS_CREDS_PATH }, { name: 'TCAB_NATS_INBOX_PREFIX', value: runInboxPrefix(runId) });
  // The npm cache's install credential (mounted by driverVolumes): the driver's alone, like its NATS credential.
  if (config.TCAB_DRIVER_NPM_AUTH_SECRET) env.push(...driverEnvVars({ TCAB_NPM_AUTH_FILE: NPM_AUTH_PATH }));
  // Through the gateway: the token under the key variable (so the driver's auth resolves api-key with it), where
  // the gateway is and which of its providers; the driver then hosts no gateway of its own. Optional like the keys:
  // a missing token fails the run at once, naming the variable, instead of holding the Pod in ContainerConfigError.
  const gateway = input.gateway;
  if (gateway) {
    env.push(
      { name: gateway.keyVar, valueFrom: { secretKeyRef: { name: gateway.tokenSecret, key: GATEWAY_TOKEN_KEY, optional: true } } },
      { name: GATEWAY_URL_VARIABLE, value: gateway.url },
      { name: GATEWAY_PROVIDER_VARIABLE, value: gateway.provider },
    );
  }
  return env;
}

/** The install's credentials the driver reads by Secret reference: the OTLP headers, the NATS user of an install without auth. */
function secretRefEnv(config: DispatcherConfig): V1EnvVar[] {
  const env: V1EnvVar[] = [];
  // The OTLP headers (often a token) by reference, never in the chart's plain driver env; the driver scrubs them.
  const otelHeaders = config.TCAB_DRIVER_OTEL_HEADERS_SECRET;
  if (otelHeaders) env.push({ name: 'OTEL_EXPORTER_OTLP_HEADERS', valueFrom: { secretKeyRef: { name: otelHeaders.secret, key: otelHeaders.key, optional: true } } });
  if (config.TCAB_NATS_SECRET) {
    for (const [name, key] of [['TCAB_NATS_USER', 'user'], ['TCAB_NATS_PASSWORD', 'password'], ['TCAB_NATS_TOKEN', 'token']] as const) {
      env.push({ name, valueFrom: { secretKeyRef: { name: config.TCAB_NATS_SECRET, key, optional: true } } });
    }
  }
  return env;
}

/**
 * The Pod's volumes and the driver's mounts of them: the scratch volume (/tmp, the only writable place), the node's
 * release store, and the root-only Secrets and the extra CA the driver's variables name (driverEnv).
 */
function driverVolumes(spec: RunSpec, config: DispatcherConfig, natsCredsSecret: string | undefined): { volumes: V1Volume[]; mounts: V1VolumeMount[] } {
  // Own keys only: a Run's harness slug is caller text, and "constructor" must not find Object's.
  const subscriptionSecret = Object.hasOwn(config.TCAB_SUBSCRIPTION_SECRETS, spec.harness) ? config.TCAB_SUBSCRIPTION_SECRETS[spec.harness] : undefined;
  const volumes: V1Volume[] = [{ name: 'tmp', emptyDir: {} }];
  const mounts: V1VolumeMount[] = [{ name: 'tmp', mountPath: '/tmp' }];
  if (config.TCAB_DRIVER_RELEASE_STORE) {
    // Written by the driver (root) only: the store's files are root's and read-only (driver/stages/release-store.ts);
    // prefixes/ is root's and not listable, each prefix the run user's own (driver/run-dirs.ts).
    volumes.push({ name: 'release-store', hostPath: { path: config.TCAB_DRIVER_RELEASE_STORE, type: 'DirectoryOrCreate' } });
    mounts.push({ name: 'release-store', mountPath: NODE_CACHE_MOUNT });
  }
  if (subscriptionSecret) {
    volumes.push({ name: 'credentials', secret: { secretName: subscriptionSecret, defaultMode: 0o400 } });
    mounts.push({ name: 'credentials', mountPath: CREDENTIALS_MOUNT, readOnly: true });
  }
  if (natsCredsSecret) {
    // 0400 and no fsGroup: root (the driver) reads it, the run user cannot.
    volumes.push({ name: 'nats-creds', secret: { secretName: natsCredsSecret, defaultMode: 0o400, items: [{ key: 'nats.creds', path: 'nats.creds' }] } });
    mounts.push({ name: 'nats-creds', mountPath: NATS_CREDS_DIR, readOnly: true });
  }
  const npmAuth = config.TCAB_DRIVER_NPM_AUTH_SECRET;
  if (npmAuth) {
    // 0400 and no fsGroup: the driver reads it and hands it to npm for the install stages only; the agent never can.
    volumes.push({ name: 'npm-auth', secret: { secretName: npmAuth.secret, defaultMode: 0o400, items: [{ key: npmAuth.key, path: 'auth' }] } });
    mounts.push({ name: 'npm-auth', mountPath: NPM_AUTH_DIR, readOnly: true });
  }
  const extraCa = config.TCAB_DRIVER_EXTRA_CA;
  if (extraCa) {
    volumes.push({ name: 'extra-ca', configMap: { name: extraCa.configMap, items: [{ key: extraCa.key, path: 'ca.crt' }] } });
    mounts.push({ name: 'extra-ca', mountPath: EXTRA_CA_DIR, readOnly: true });
  }
  return { volumes, mounts };
}
