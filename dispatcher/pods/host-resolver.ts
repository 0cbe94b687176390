// Resolves the names a driver Pod without cluster DNS needs (egress.ts namesToResolve) from the dispatcher's own
// Pod, whose resolver is the cluster's: ClusterIPs of the install's Services, mostly. Answers are kept for a short
// while, so a burst of claims asks once per name; a name that does not resolve fails the claim (retried with
// back-off) rather than starting a Pod that cannot reach its NATS.
import { lookup } from 'node:dns/promises';

export type Lookup = (name: string) => Promise<string[]>;

const systemLookup: Lookup = async (name) => (await lookup(name, { all: true, family: 4 })).map((a) => a.address);

export class HostResolver {
  private readonly cache = new Map<string, { ips: Promise<string[]>; until: number }>();
  private readonly ttlMs: number;
  private readonly look: Lookup;

  constructor(options: { ttlMs?: number; lookup?: Lookup } = {}) {
    this.ttlMs = options.ttlMs ?? 30_000;
    this.look = options.lookup ?? systemLookup;
  }

  async resolve(names: readonly string[]): Promise<Map<string, string[]>> {
    const now = Date.now();
    const entries = await Promise.all(names.map(async (name) => {
      let hit = this.cache.get(name);
      if (!hit || hit.until <= now) {
        hit = { ips: this.look(name), until: now + this.ttlMs };
        this.cache.set(name, hit);
        // A failure is not kept: the next claim asks again.
        hit.ips.catch(() => this.cache.delete(name));
      }
      const ips = await hit.ips.catch((error: unknown) => {
        throw new Error(`cannot resolve ${name} for a driver Pod's /etc/hosts: ${(error as Error).message}`);
      });
      if (ips.length === 0) throw new Error(`cannot resolve ${name} for a driver Pod's /etc/hosts: no IPv4 address`);
      return [name, ips] as const;
    }));
    return new Map(entries);
  }
}
