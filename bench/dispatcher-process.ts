// The dispatcher benchmark's handle on its child (bench/dispatcher-child.ts): requests over IPC, and the child's
// memory as the kernel sees it (/proc/<pid>/status: VmRSS now, VmHWM the peak), sampled while the bench runs.
import { join } from 'node:path';
import { startBenchChild } from './child-process.ts';
import type { ChildRequest } from './dispatcher-child.ts';

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
  const child = await startBenchChild<ChildRequest>(join(import.meta.dirname, 'dispatcher-child.ts'), 'dispatcher', env);
  log(`dispatcher child ${child.pid} synced`);
  return {
    ask: child.ask,
    rss: child.rss,
    peak: child.peak,
    timeline: child.timeline,
    async stop() {
      const reply = await child.ask<Record<string, unknown>>({ type: 'stop' });
      child.stopSampling();
      await child.exited;
      return reply;
    },
    kill: child.kill,
  };
}
