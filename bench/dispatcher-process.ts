// The dispatcher benchmark's handle on its child (bench/dispatcher-child.ts): requests over IPC, and the child's
// memory as the kernel sees it (/proc/<pid>/status: VmRSS now, VmHWM the peak), sampled while the bench runs.
import { procStatusMb, sampleRss } from './rss-sampler.ts';
import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { ChildRequest } from './dispatcher-child.ts';

const QUANTITY_UNITS: Record<string, number> = { '': 1, k: 1e3, M: 1e6, G: 1e9, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30 };

/** A Kubernetes memory quantity ("1Gi", "512Mi", "1000000") in MB (2^20 bytes). */
export function quantityMb(quantity: string | number): number {
  const match = /^([0-9.]+)(k|M|G|Ki|Mi|Gi)?$/.exec(String(quantity));
  if (!match) throw new Error(`unsupported memory quantity: ${quantity}`);
  return (Number(match[1]) * QUANTITY_UNITS[match[2] ?? '']!) / 2 ** 20;
}

/** The malloc setting of the chart's Deployment (templates/deployment.yaml), given to the bench child too. */
export const CHART_MALLOC_ENV = { MALLOC_ARENA_MAX: '2' };

/**
 * The V8 heap the chart gives the dispatcher (charts/tcab/values.yaml): NODE_OPTIONS there sets
 * --max-old-space-size-percentage, which Node applies to the container's memory limit (its cgroup). The bench child
 * runs under no such limit (Node would size its heap from the machine's RAM and let it grow to gigabytes before
 * collecting hard), so it gets the same size in MB: the bench measures the heap the chart ships.
 */
export function chartHeapArgs(valuesPath = join(import.meta.dirname, '..', 'charts', 'tcab', 'values.yaml')): string[] {
  const dispatcher = (parse(readFileSync(valuesPath, 'utf8')) as { dispatcher: { resources: { limits: { memory: string } }; heapPercentOfMemoryLimit: number } }).dispatcher;
  return [`--max-old-space-size=${Math.floor((quantityMb(dispatcher.resources.limits.memory) * dispatcher.heapPercentOfMemoryLimit) / 100)}`];
}

export interface DispatcherProcess {
  ask<T = Record<string, unknown>>(request: ChildRequest): Promise<T>;
  /** VmRSS now (MB). */
  rss(): number;
  /** The highest VmRSS sampled (every 100 ms) and the kernel's own high-water mark (MB). */
  peak(): { sampled: number; vm_hwm: number };
  /** RSS samples [seconds since start, MB], one a second, for the report. */
  timeline(): [number, number][];
  stop(): Promise<Record<string, unknown>>;
  kill(): void;
}

export async function startDispatcherProcess(env: NodeJS.ProcessEnv, log: (m: string) => void): Promise<DispatcherProcess> {
  const child: ChildProcess = fork(join(import.meta.dirname, 'dispatcher-child.ts'), [], {
    env: { ...process.env, ...CHART_MALLOC_ENV, ...env },
    // TCAB_BENCH_CPU_PROF=<dir>: the child writes a V8 CPU profile there when it exits (where its time goes).
    execArgv: ['--expose-gc', ...chartHeapArgs(), ...(process.env.TCAB_BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.TCAB_BENCH_CPU_PROF}`] : [])],
    stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
  });
  // The dispatcher's own log lines go nowhere but a count: a burst of claims logs a line per pass.
  let stderrTail = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderrTail = (stderrTail + chunk.toString()).slice(-4000)));
  const pending = new Map<number, { resolve: (v: never) => void; reject: (e: Error) => void }>();
  let nextId = 0;
  let ready!: () => void;
  let failed!: (e: Error) => void;
  const started = new Promise<void>((resolve, reject) => ([ready, failed] = [resolve, reject]));
  child.on('message', (message: { id?: number; type?: string; error?: string }) => {
    if (message.type === 'ready') return ready();
    const waiter = pending.get(message.id!);
    pending.delete(message.id!);
    if (message.error) waiter?.reject(new Error(`dispatcher child: ${message.error}`));
    else waiter?.resolve(message as never);
  });
  child.on('exit', (code, signal) => {
    const error = new Error(`dispatcher child exited (${code ?? signal}); its stderr ended with:\n${stderrTail}`);
    failed(error);
    for (const waiter of pending.values()) waiter.reject(error);
  });
  const pid = child.pid!;
  const rss = sampleRss(pid);
  const ask = <T>(request: ChildRequest) =>
    new Promise<T>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve: resolve as (v: never) => void, reject });
      child.send({ id, ...request });
    });
  await started;
  log(`dispatcher child ${pid} synced`);
  return {
    ask,
    rss: () => procStatusMb(pid, 'VmRSS') ?? 0,
    peak: rss.peak,
    timeline: rss.timeline,
    async stop() {
      const reply = await ask<Record<string, unknown>>({ type: 'stop' });
      rss.stop();
      await new Promise((resolve) => (child.exitCode === null ? child.once('exit', resolve) : resolve(undefined)));
      return reply;
    },
    kill: () => {
      rss.stop();
      child.kill('SIGKILL');
    },
  };
}
