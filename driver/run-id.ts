import { randomBytes } from 'node:crypto';

/** A local run's id (the cluster path uses the Run object's name): sortable by time, safe as a NATS token. */
export function newRunId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-').toLowerCase();
  return `run-${stamp}-${randomBytes(3).toString('hex')}`;
}
