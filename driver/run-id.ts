import { randomBytes } from 'node:crypto';
import type { RunId } from '../shared/run-id.ts';

/** A local run's id (the cluster path derives it from the Run: clusterRunIdOf): sortable by time, in the run id grammar. */
export function newRunId(now = new Date()): RunId {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-').toLowerCase();
  return `run-${stamp}-${randomBytes(3).toString('hex')}`;
}
