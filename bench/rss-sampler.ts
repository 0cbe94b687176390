// A bench child's resident memory, sampled from /proc/<pid>/status every 100 ms: the peak, and one sample a second
// for the report's timeline. The dispatcher and evaluation benches both watch their child with it.
import { readFileSync } from 'node:fs';

/** kB fields of /proc/<pid>/status, in MB; undefined once the process is gone. */
export function procStatusMb(pid: number, field: 'VmRSS' | 'VmHWM'): number | undefined {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Math.round(Number(match[1]) / 1024) : undefined;
  } catch {
    return undefined;
  }
}

export interface RssSampler {
  /** The highest VmRSS sampled, and the kernel's own high-water mark (VmHWM), in MB. */
  peak(): { sampled: number; vm_hwm: number };
  /** [seconds since start, MB], one a second. */
  timeline(): [number, number][];
  stop(): void;
}

export function sampleRss(pid: number): RssSampler {
  const t0 = performance.now();
  let peak = 0;
  const samples: [number, number][] = [];
  const sampler = setInterval(() => {
    const rss = procStatusMb(pid, 'VmRSS');
    if (rss === undefined) return;
    peak = Math.max(peak, rss);
    const second = Math.floor((performance.now() - t0) / 1000);
    if (samples.at(-1)?.[0] !== second) samples.push([second, rss]);
  }, 100);
  sampler.unref();
  return {
    peak: () => ({ sampled: peak, vm_hwm: procStatusMb(pid, 'VmHWM') ?? peak }),
    timeline: () => samples,
    stop: () => clearInterval(sampler),
  };
}
