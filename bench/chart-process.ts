// How the chart runs its Node processes (charts/tcab: the Deployment's malloc setting, the V8 heap as a share of
// the memory limit), for bench children that should measure what the chart ships.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

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
