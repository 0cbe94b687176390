// `tcab harnesses verify` on today's releases: every harness that can run offline and ships scenarios installs
// its newest release and must pass its scenarios against the stub model. A new harness folder joins by itself.
import { describe, expect, it } from 'vitest';
import { listHarnesses } from '../../harnesses/registry.ts';
import { loadScenarios, verifyHarness } from '../../driver/verify/run-scenarios.ts';

const verifiable = listHarnesses().filter((h) => h.manifest.stub_wire && loadScenarios(h).length > 0);

describe('tcab harnesses verify (newest releases, offline)', () => {
  it('has harnesses to verify', () => {
    expect(verifiable.map((h) => h.manifest.slug)).toContain('claude');
  });
  it.each(verifiable.map((h) => [h.manifest.slug, h] as const))('%s passes every scenario', async (_slug, entry) => {
    const report = await verifyHarness(entry, { env: process.env });
    const failures = report.scenarios.filter((s) => s.verdict !== 'pass').map((s) => `${s.scenario}: ${s.problems.join('; ')}`);
    expect(failures).toEqual([]);
    expect(report.verdict).toBe('pass');
  }, 600_000);
});
