// One pod on the process kubelet, from Pending to a terminal phase or deletion: images mapped to local commands,
// volumes written, each container spawned in a private mount namespace (volume bind mounts at their paths) as its
// runAsUser/runAsGroup, status and Events written like a kubelet's, restartPolicy, activeDeadlineSeconds, and
// graceful deletion (TERM, the grace period, KILL, then the final delete).
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, rmSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { V1Container, V1ContainerStatus, V1Pod, V1PodCondition } from '@kubernetes/client-node';
import type { KubeletApi } from './api.ts';
import { containerEnv, EnvError } from './env.ts';
import { containerArgv, expand } from './images.ts';
import type { ImageMap } from './images.ts';
import { prepareVolumes } from './volumes.ts';

export interface WorkerDeps {
  api: KubeletApi;
  images: ImageMap;
  root: string;
  apiServer: { host: string; port: number };
  log: (line: string) => void;
  /**
   * The "image contents": host directories the mapped commands run from (the repository, Node 24). A volume
   * mounted over one of their parents (the driver Pod's emptyDir at /tmp, with the repository cloned under /tmp)
   * would hide them, so they are bind-mounted back on top, as an image's files would be there.
   */
  imageRoots: string[];
}

/** Host paths the kubelet created as mount targets, shared by pods; removed when the last user is gone. */
const createdTargets = new Map<string, number>();

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
const now = () => new Date();

interface ContainerRun {
  spec: V1Container;
  status: V1ContainerStatus;
  child?: ChildProcess;
  exited?: Promise<void>;
  restartTimer?: NodeJS.Timeout;
}

export class PodWorker {
  private pod: V1Pod;
  private readonly dir: string;
  private readonly containers: ContainerRun[];
  private readonly targets: string[] = [];
  private phase: 'Pending' | 'Running' | 'Succeeded' | 'Failed' = 'Pending';
  private reason: string | undefined;
  private message: string | undefined;
  private startTime = now();
  private terminating = false;
  /** cleanup() ran: files and mount targets are gone, `done` resolved. */
  private finished = false;
  private stopped = false;
  private deadlineTimer?: NodeJS.Timeout;
  private statusChain: Promise<unknown> = Promise.resolve();
  /** Resolves when the pod's processes are gone and its files removed. */
  readonly done: Promise<void>;
  private finish!: () => void;

  private readonly deps: WorkerDeps;

  constructor(pod: V1Pod, deps: WorkerDeps) {
    this.pod = pod;
    this.deps = deps;
    this.dir = join(deps.root, 'pods', pod.metadata!.uid!);
    this.containers = (pod.spec?.containers ?? []).map((spec) => ({
      spec,
      status: { name: spec.name, image: spec.image ?? '', imageID: '', ready: false, restartCount: 0, started: false, state: { waiting: { reason: 'ContainerCreating' } } },
    }));
    this.done = new Promise((resolve) => (this.finish = resolve));
  }

  get uid(): string {
    return this.pod.metadata!.uid!;
  }

  update(pod: V1Pod): void {
    this.pod = pod;
    if (pod.metadata?.deletionTimestamp && !this.terminating) void this.terminate('deleted', pod.metadata.deletionGracePeriodSeconds ?? pod.spec?.terminationGracePeriodSeconds ?? 30);
  }

  /** The pod is gone from the apiserver (or the kubelet stops): kill without writing status. */
  async kill(): Promise<void> {
    this.stopped = true;
    await this.stopContainers(0);
    this.cleanup();
  }

  async run(): Promise<void> {
    mkdirSync(this.dir, { recursive: true });
    await this.writeStatus();
    const ads = this.pod.spec?.activeDeadlineSeconds;
    if (ads !== undefined) this.deadlineTimer = setTimeout(() => void this.deadlineExceeded(), ads * 1000);
    for (const c of this.containers) {
      const image = c.spec.image ?? '';
      await this.deps.api.event(this.pod, 'Normal', 'Pulling', `Pulling image "${image}"`, c.spec.name);
      if (!this.deps.images(image)) {
        c.status.state = { waiting: { reason: 'ErrImagePull', message: `image "${image}" is not mapped to a local command` } };
        await this.deps.api.event(this.pod, 'Warning', 'Failed', `Failed to pull image "${image}": no local command is mapped to this image in the process kubelet's images file`, c.spec.name);
        await this.deps.api.event(this.pod, 'Warning', 'Failed', 'Error: ErrImagePull', c.spec.name);
        await this.writeStatus();
        return; // like a kubelet, the pod stays Pending
      }
      await this.deps.api.event(this.pod, 'Normal', 'Pulled', `Container image "${image}" already present on machine`, c.spec.name);
    }
    let volumes: Map<string, string> | undefined;
    for (let attempt = 0; !volumes; attempt++) {
      if (this.terminating || this.stopped) return;
      try {
        volumes = await prepareVolumes(this.pod, this.dir, this.deps.api, this.deps.api);
      } catch (error) {
        if (!(error instanceof EnvError)) throw error;
        await this.deps.api.event(this.pod, 'Warning', 'FailedMount', `MountVolume.SetUp failed: ${error.message}`);
        await new Promise((resolve) => setTimeout(resolve, Math.min(500 * 2 ** attempt, 5000)));
      }
    }
    for (const c of this.containers) await this.startContainer(c, volumes);
  }

  private async startContainer(c: ContainerRun, volumes: Map<string, string>): Promise<void> {
    if (this.terminating || this.stopped) return;
    const pod = this.pod;
    const image = this.deps.images(c.spec.image ?? '')!;
    let env: Record<string, string>;
    try {
      env = await containerEnv(pod, c.spec, this.deps.api, this.baseEnv());
    } catch (error) {
      if (!(error instanceof EnvError)) throw error;
      c.status.state = { waiting: { reason: 'CreateContainerConfigError', message: error.message } };
      await this.deps.api.event(pod, 'Warning', 'Failed', `Error: ${error.message}`, c.spec.name);
      await this.writeStatus();
      c.restartTimer = setTimeout(() => void this.startContainer(c, volumes), 2000);
      return;
    }
    const argv = containerArgv(image, c.spec.command, c.spec.args).map((a) => expand(a, env));
    const security = { ...pod.spec?.securityContext, ...c.spec.securityContext };
    const uid = security.runAsUser ?? 0;
    const gid = security.runAsGroup ?? 0;
    if (security.runAsNonRoot && uid === 0) {
      c.status.state = { waiting: { reason: 'CreateContainerConfigError', message: 'container has runAsNonRoot and image will run as root' } };
      await this.deps.api.event(pod, 'Warning', 'Failed', 'Error: container has runAsNonRoot and image will run as root', c.spec.name);
      await this.writeStatus();
      return;
    }
    const groups = [pod.spec?.securityContext?.fsGroup, ...(pod.spec?.securityContext?.supplementalGroups ?? [])].filter((g): g is number => g !== undefined);
    const mounts: string[] = [];
    for (const m of c.spec.volumeMounts ?? []) {
      const base = volumes.get(m.name);
      if (!base) throw new Error(`volumeMount ${m.name} names no volume`);
      const source = m.subPath ? join(base, m.subPath) : base;
      this.ensureTarget(m.mountPath, existsSync(source) && !statSync(source).isDirectory());
      mounts.push(`mount --bind ${quote(source)} ${quote(m.mountPath)}`);
      if (m.readOnly) mounts.push(`mount -o remount,bind,ro ${quote(m.mountPath)}`);
    }
    const identity = uid === 0 && gid === 0 && groups.length === 0 ? '' : `setpriv --reuid=${uid} --regid=${gid} ${groups.length > 0 ? `--groups=${groups.join(',')}` : '--clear-groups'} --pdeathsig KILL -- `;
    // Keep a handle on the image roots (a private tmpfs at /mnt), mount the volumes, then put back any root a
    // volume hid (same device:inode = still visible).
    const roots = this.deps.imageRoots;
    const keep = roots.length === 0 ? [] : ['mount -t tmpfs tcab-image-roots /mnt', ...roots.map((r, i) => `mkdir -p /mnt/${i} && mount --bind ${quote(r)} /mnt/${i}`)];
    const restore = roots.map((r, i) => `[ "$(stat -c %d:%i ${quote(r)} 2>/dev/null)" = "$(stat -c %d:%i /mnt/${i})" ] || { mkdir -p ${quote(r)} && mount --bind /mnt/${i} ${quote(r)}; }`);
    const script = ['set -e', ...keep, ...mounts, ...restore, `cd ${quote(c.spec.workingDir ?? '/')}`, `exec ${identity}"$@"`].join('\n');
    const logFile = join(this.dir, `${c.spec.name}.log`);
    const fd = openSync(logFile, 'a');
    const child = spawn('setpriv', ['--pdeathsig', 'KILL', '--', 'unshare', '--mount', '--propagation', 'private', '--', '/bin/sh', '-c', script, 'sh', ...argv], { env, detached: true, stdio: ['ignore', fd, fd] });
    closeSync(fd);
    c.child = child;
    const startedAt = now();
    // Running is recorded before anything is awaited, so a container that exits at once is seen to run first
    // (the apiserver refuses a terminated -> running transition).
    c.status = { ...c.status, containerID: `process://${child.pid}`, imageID: c.spec.image ?? '', ready: true, started: true, state: { running: { startedAt } } };
    if (this.containers.every((x) => x.status.state?.running || x.status.state?.terminated)) this.phase = 'Running';
    void this.writeStatus();
    c.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(void this.containerExited(c, code, signal, startedAt, volumes))));
    child.once('error', (error) => this.deps.log(`container ${c.spec.name} of ${pod.metadata!.name}: ${error.message}`));
    await this.deps.api.event(pod, 'Normal', 'Created', `Created container: ${c.spec.name}`, c.spec.name);
    await this.deps.api.event(pod, 'Normal', 'Started', `Started container ${c.spec.name}`, c.spec.name);
  }

  private async containerExited(c: ContainerRun, code: number | null, signal: NodeJS.Signals | null, startedAt: Date, volumes: Map<string, string>): Promise<void> {
    c.child = undefined;
    const exitCode = code ?? 128 + (signal === 'SIGKILL' ? 9 : signal === 'SIGTERM' ? 15 : 1);
    const terminated = { exitCode, reason: exitCode === 0 ? 'Completed' : 'Error', startedAt, finishedAt: now(), containerID: c.status.containerID, signal: undefined };
    c.status = { ...c.status, ready: false, started: false, state: { terminated } };
    if (this.terminating || this.stopped) return;
    const policy = this.pod.spec?.restartPolicy ?? 'Always';
    if (policy === 'Always' || (policy === 'OnFailure' && exitCode !== 0)) {
      const delay = Math.min(1000 * 2 ** c.status.restartCount, 10_000);
      c.status = { ...c.status, lastState: { terminated }, state: { waiting: { reason: 'CrashLoopBackOff', message: `back-off ${delay / 1000}s restarting failed container=${c.spec.name} pod=${this.pod.metadata!.name}` } } };
      await this.deps.api.event(this.pod, 'Warning', 'BackOff', 'Back-off restarting failed container', c.spec.name);
      await this.writeStatus();
      c.restartTimer = setTimeout(() => {
        c.status.restartCount += 1;
        void this.startContainer(c, volumes);
      }, delay);
      return;
    }
    if (this.containers.every((x) => x.status.state?.terminated)) {
      this.phase = this.containers.every((x) => x.status.state?.terminated?.exitCode === 0) ? 'Succeeded' : 'Failed';
      clearTimeout(this.deadlineTimer);
    }
    await this.writeStatus();
    if (this.phase === 'Succeeded' || this.phase === 'Failed') this.cleanup();
  }

  private async deadlineExceeded(): Promise<void> {
    if (this.terminating || this.phase === 'Succeeded' || this.phase === 'Failed') return;
    this.terminating = true;
    this.phase = 'Failed';
    this.reason = 'DeadlineExceeded';
    this.message = `Pod was active on the node longer than the specified deadline`;
    await this.deps.api.event(this.pod, 'Normal', 'DeadlineExceeded', this.message);
    await this.stopContainers(this.pod.spec?.terminationGracePeriodSeconds ?? 30);
    await this.writeStatus();
    this.cleanup();
  }

  private async terminate(why: 'deleted', graceSeconds: number): Promise<void> {
    this.terminating = true;
    clearTimeout(this.deadlineTimer);
    this.deps.log(`pod ${this.pod.metadata!.namespace}/${this.pod.metadata!.name} ${why}: stopping with a grace period of ${graceSeconds}s`);
    await this.stopContainers(graceSeconds);
    await this.writeStatus().catch(() => undefined);
    await this.deps.api.deletePodNow(this.pod);
    this.cleanup();
  }

  /** TERM to each container's process group, KILL after the grace period. */
  private async stopContainers(graceSeconds: number): Promise<void> {
    await Promise.all(
      this.containers.map(async (c) => {
        clearTimeout(c.restartTimer);
        const child = c.child;
        if (!child?.pid) return;
        if (!this.stopped) await this.deps.api.event(this.pod, 'Normal', 'Killing', `Stopping container ${c.spec.name}`, c.spec.name);
        const signal = (s: NodeJS.Signals) => {
          try {
            process.kill(-child.pid!, s);
          } catch {
            // already gone
          }
        };
        signal(graceSeconds > 0 ? 'SIGTERM' : 'SIGKILL');
        const timer = setTimeout(() => signal('SIGKILL'), graceSeconds * 1000);
        await c.exited;
        clearTimeout(timer);
      }),
    );
  }

  private ensureTarget(path: string, isFile: boolean): void {
    const missing: string[] = [];
    for (let p = path; !existsSync(p); p = dirname(p)) missing.unshift(p);
    missing.forEach((p, i) => {
      if (isFile && i === missing.length - 1) writeFileSync(p, '');
      else mkdirSync(p);
    });
    for (const p of missing) createdTargets.set(p, 0);
    // Count users of every created path this pod relies on (its own and those another pod created).
    for (let p = path; createdTargets.has(p); p = dirname(p)) {
      createdTargets.set(p, createdTargets.get(p)! + 1);
      this.targets.push(p);
    }
  }

  private cleanup(): void {
    if (this.finished) return;
    this.finished = true;
    clearTimeout(this.deadlineTimer);
    for (const p of this.targets) {
      const users = (createdTargets.get(p) ?? 1) - 1;
      createdTargets.set(p, users);
    }
    // Deepest first: a file or directory the kubelet made, once no pod mounts on it any more.
    for (const p of [...new Set(this.targets)].sort((a, b) => b.length - a.length)) {
      if (createdTargets.get(p) !== 0) continue;
      try {
        if (statSync(p).isDirectory()) rmdirSync(p);
        else rmSync(p);
        createdTargets.delete(p);
      } catch {
        // not empty (someone else's files): left alone
      }
    }
    rmSync(this.dir, { recursive: true, force: true });
    this.finish();
  }


  private baseEnv(): Record<string, string> {
    const { host, port } = this.deps.apiServer;
    return {
      PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      HOSTNAME: this.pod.metadata!.name!,
      HOME: '/',
      KUBERNETES_SERVICE_HOST: host,
      KUBERNETES_SERVICE_PORT: String(port),
      KUBERNETES_SERVICE_PORT_HTTPS: String(port),
      KUBERNETES_PORT: `tcp://${host}:${port}`,
    };
  }

  private writeStatus(): Promise<unknown> {
    const snapshot = this.statusSnapshot();
    this.statusChain = this.statusChain.then(() => this.deps.api.writeStatus(this.pod, snapshot)).catch((error: unknown) => this.deps.log(`status of ${this.pod.metadata!.name}: ${(error as Error).message}`));
    return this.statusChain;
  }

  private statusSnapshot() {
    const time = now();
    const allReady = this.containers.length > 0 && this.containers.every((c) => c.status.ready);
    const started = this.containers.some((c) => c.status.containerID);
    const condition = (type: string, ok: boolean, reason?: string): V1PodCondition => ({ type, status: ok ? 'True' : 'False', lastTransitionTime: time, reason: ok ? undefined : reason });
    return {
      phase: this.phase,
      reason: this.reason,
      message: this.message,
      hostIP: '127.0.0.1',
      hostIPs: [{ ip: '127.0.0.1' }],
      podIP: '127.0.0.1',
      podIPs: [{ ip: '127.0.0.1' }],
      startTime: this.startTime,
      conditions: [
        condition('PodReadyToStartContainers', started || this.phase !== 'Pending'),
        condition('Initialized', true),
        condition('ContainersReady', allReady, 'ContainersNotReady'),
        condition('Ready', allReady, 'ContainersNotReady'),
      ],
      containerStatuses: this.containers.map((c) => structuredClone(c.status)),
    };
  }
}
