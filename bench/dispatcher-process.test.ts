// The dispatcher bench runs its dispatcher with the heap the Helm chart ships (dispatcher-process.ts): these hold
// the two halves of that together, so a chart change cannot leave the bench measuring another heap.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHART_MALLOC_ENV, chartHeapArgs, quantityMb } from './chart-process.ts';

const CHART = join(import.meta.dirname, '..', 'charts', 'tcab');

describe('the dispatcher bench child heap', () => {
  it('reads Kubernetes memory quantities in MB', () => {
    expect(quantityMb('1Gi')).toBe(1024);
    expect(quantityMb('512Mi')).toBe(512);
    expect(quantityMb('2048Ki')).toBe(2);
    expect(quantityMb(2 ** 21)).toBe(2);
    expect(quantityMb('1G')).toBeCloseTo(953.67, 2);
    expect(() => quantityMb('1Gb')).toThrow(/unsupported memory quantity/);
  });

  it('is the chart\'s percentage of the chart\'s memory limit', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tcab-heap-'));
    const values = join(dir, 'values.yaml');
    writeFileSync(values, 'dispatcher:\n  resources:\n    limits: { memory: 2Gi }\n  heapPercentOfMemoryLimit: 40\n');
    expect(chartHeapArgs(values)).toEqual(['--max-old-space-size=819']);
  });

  it('matches what the chart\'s Deployment passes to Node', () => {
    // The percentage the bench applies is the one the Deployment hands Node (applied there to the cgroup limit).
    const deployment = readFileSync(join(CHART, 'templates', 'deployment.yaml'), 'utf8');
    expect(deployment).toMatch(/- name: NODE_OPTIONS\n\s+value: "--max-old-space-size-percentage=\{\{ \.Values\.dispatcher\.heapPercentOfMemoryLimit \}\}"/);
    expect(chartHeapArgs()).toEqual([expect.stringMatching(/^--max-old-space-size=\d+$/)]);
    for (const [name, value] of Object.entries(CHART_MALLOC_ENV)) expect(deployment).toMatch(new RegExp(`- name: ${name}\\n\\s+value: "${value}"`));
  });
});
