// Reaching into the cluster from the test process as an operator does: `kubectl exec` into a container, and every
// container log of a namespace kept from the moment it appears (a driver Pod's log goes with the Pod, which the
// dispatcher deletes after the run; `kubectl logs` serves the same kubelet files while a Pod exists).
// `kubectl port-forward` to a Service is real-chart.ts's forwardService, shared with the bench.
import { closeSync, existsSync, fstatSync, openSync, readSync, readdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { kubectl } from '../cluster/support.ts';

/** `kubectl exec <pod> -c <container> -- /bin/sh -c <script>`: runs in the container with its security context. */
export function inContainer(namespace: string, pod: string, container: string, script: string): Promise<{ stdout: string; stderr: string; code: number }> {
  return kubectl(['exec', '-n', namespace, pod, '-c', container, '--', '/bin/sh', '-c', script]);
}

/**
 * Every container log of a namespace (the kubelet's CRI log files, which `kubectl logs` serves), kept open from the
 * moment it appears: a driver Pod's log is gone once the dispatcher deletes the Pod, an open file is not.
 */
export class LogCapture {
  private readonly files = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;
  private readonly namespace: string;
  private readonly dir: string;
  constructor(namespace: string, dir = '/var/log/containers') {
    this.namespace = namespace;
    this.dir = dir;
    // Sampling the directory, not waiting on it: nothing here is synchronised by the interval.
    this.timer = setInterval(() => this.scan(), 50);
    this.scan();
  }

  private scan(): void {
    if (!existsSync(this.dir)) return;
    for (const entry of readdirSync(this.dir)) {
      // <pod>_<namespace>_<container>-<container id>.log
      if (this.files.has(entry) || entry.split('_')[1] !== this.namespace) continue;
      try {
        this.files.set(entry, openSync(realpathSync(join(this.dir, entry)), 'r'));
      } catch {
        // removed between the listing and the open
      }
    }
  }

  /** Every log so far, by file name (`<pod>_<namespace>_<container>-<id>.log`). */
  logs(): Record<string, string> {
    this.scan();
    const whole = (fd: number) => {
      const buffer = Buffer.alloc(fstatSync(fd).size);
      let at = 0;
      while (at < buffer.length) {
        const n = readSync(fd, buffer, at, buffer.length - at, at);
        if (n === 0) break;
        at += n;
      }
      return buffer.subarray(0, at).toString('utf8');
    };
    return Object.fromEntries([...this.files].map(([name, fd]) => [name, whole(fd)]));
  }

  close(): void {
    clearInterval(this.timer);
    for (const fd of this.files.values()) closeSync(fd);
    this.files.clear();
  }
}
