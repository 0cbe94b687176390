// A bench child (a dispatcher or an Evaluation controller in a process of its own, as the chart runs it): forked
// with the chart's malloc setting and V8 heap, asked over IPC (`{id, ...request}` out, `{id, ...reply}` or
// `{id, error}` back, `{type: 'ready'}` once synced), its memory sampled from /proc while it runs. One
// implementation for bench/dispatcher-process.ts and bench/evaluation.ts.
import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { procStatusMb, sampleRss } from './rss-sampler.ts';
import { CHART_MALLOC_ENV, chartHeapArgs } from './chart-process.ts';

export interface BenchChild<Request> {
  pid: number;
  ask<T = Record<string, unknown>>(request: Request): Promise<T>;
  /** VmRSS now (MB). */
  rss(): number;
  /** The highest VmRSS sampled (every 100 ms) and the kernel's own high-water mark (MB). */
  peak(): { sampled: number; vm_hwm: number };
  /** RSS samples [seconds since start, MB], one a second, for the report. */
  timeline(): [number, number][];
  /** Stops sampling and kills the child. */
  kill(): void;
  /** Stops sampling (the child exits on its own, e.g. after a stop request). */
  stopSampling(): void;
  exited: Promise<void>;
}

/** Forks `script` and resolves once it says it is ready (rejects when it exits first, with its stderr's end). */
export async function startBenchChild<Request extends object>(script: string, name: string, env: NodeJS.ProcessEnv): Promise<BenchChild<Request>> {
  const child: ChildProcess = fork(script, [], {
    env: { ...process.env, ...CHART_MALLOC_ENV, ...env },
    // TCAB_BENCH_CPU_PROF=<dir>: the child writes a V8 CPU profile there when it exits (where its time goes).
    execArgv: ['--expose-gc', ...chartHeapArgs(), ...(process.env.TCAB_BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.TCAB_BENCH_CPU_PROF}`] : [])],
    stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
  });
  // The child's own log lines go nowhere but a tail, for the error when it dies.
  let stderrTail = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderrTail = (stderrTail + chunk.toString()).slice(-4000)));
  const pending = new Map<number, { resolve: (v: never) => void; reject: (e: Error) => void }>();
  let nextId = 0;
  let ready!: () => void;
  let failed!: (e: Error) => void;
  const started = new Promise<void>((resolve, reject) => ([ready, failed] = [resolve, reject]));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.on('message', (message: { id?: number; type?: string; error?: string }) => {
    if (message.type === 'ready') return ready();
    const waiter = pending.get(message.id!);
    pending.delete(message.id!);
    if (message.error) return waiter?.reject(new Error(`${name} child: ${message.error}`));
    const { id: _id, ...reply } = message;
    waiter?.resolve(reply as never);
  });
  child.on('exit', (code, signal) => {
    const error = new Error(`${name} child exited (${code ?? signal}); its stderr ended with:\n${stderrTail}`);
    failed(error);
    for (const waiter of pending.values()) waiter.reject(error);
  });
  const pid = child.pid!;
  const rss = sampleRss(pid);
  await started;
  return {
    pid,
    ask: <T>(request: Request) =>
      new Promise<T>((resolve, reject) => {
        const id = nextId++;
        pending.set(id, { resolve: resolve as (v: never) => void, reject });
        child.send({ id, ...request });
      }),
    rss: () => procStatusMb(pid, 'VmRSS') ?? 0,
    peak: rss.peak,
    timeline: rss.timeline,
    kill: () => {
      rss.stop();
      child.kill('SIGKILL');
    },
    stopSampling: () => rss.stop(),
    exited,
  };
}
