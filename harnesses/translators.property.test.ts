// Property suite for every structured translator (issue 19): mutated versions of each harness's own recorded
// fixtures go through the real engine, and the translation must hold: nothing thrown, every event valid against
// the contract, no line lost, no value invented for a field that failed its type. The oracles are in
// harnesses/fuzz/oracles.ts, the mutations in harnesses/fuzz/mutations.ts.
//
// CI runs a fixed seed with a bounded budget (100 runs per property and harness, about 15 s on 2 cores);
// `FUZZ_RUNS=5000 FUZZ_SEED=random` explores further (npm run fuzz). A failure prints the seed, the path, the shrunk
// plan and the mutated stream: replay exactly that case with FUZZ_SEED=<seed> FUZZ_PATH=<path>.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { listHarnesses, loadAdapter } from './registry.ts';
import type { RecordFold } from '../shared/translate/folds.ts';
import type { HarnessAdapter, SessionReports } from '../shared/adapter.ts';
import { applyPlan, planArb, wrongTypeArb } from './fuzz/mutations.ts';
import type { Mutation } from './fuzz/mutations.ts';
import { contractViolations, foldViolations, FUZZ_WORKDIR, inventions, lostLines, preview, translate } from './fuzz/oracles.ts';

const RUNS = Number(process.env.FUZZ_RUNS ?? 100);
const SEED = process.env.FUZZ_SEED === 'random' ? Date.now() ^ (Math.random() * 0x7fffffff) : Number(process.env.FUZZ_SEED ?? 19);
/** Per property and harness; generous because a long `npm run fuzz` scales it with the runs. */
const TIMEOUT_MS = 60_000 + RUNS * 200;

interface Recording {
  name: string;
  lines: Buffer[];
  reports: SessionReports;
}

interface Subject {
  slug: string;
  adapter: HarnessAdapter;
  folds: readonly RecordFold[];
  recordings: Recording[];
}

function splitRecording(bytes: Buffer): Buffer[] {
  const lines: Buffer[] = [];
  let start = 0;
  for (let nl = bytes.indexOf(0x0a); nl !== -1; nl = bytes.indexOf(0x0a, start)) {
    lines.push(bytes.subarray(start, nl));
    start = nl + 1;
  }
  if (start < bytes.length) lines.push(bytes.subarray(start));
  return lines;
}

/** Every harness whose manifest says `structured`, with its recordings and the report files beside them. */
async function subjects(): Promise<Subject[]> {
  const out: Subject[] = [];
  for (const { manifest, dir } of listHarnesses()) {
    if (manifest.strategy !== 'structured') continue;
    const adapter = await loadAdapter(manifest.slug);
    // Reports and `document` side files reach `finish` by name (recorded beside the stream as <fixture>.<name>).
    const invocation = adapter.invocation({ model: 'm', prompt: 'p', workdir: FUZZ_WORKDIR, home: '/h' });
    const reportNames = [...(invocation.reports ?? []), ...(invocation.sideFiles ?? []).filter((s) => s.read === 'document').map((s) => s.name)];
    const fixtures = join(dir, 'fixtures');
    const recordings = readdirSync(fixtures)
      .filter((f) => f.endsWith('.jsonl'))
      .sort()
      .map((file) => {
        const base = join(fixtures, file.slice(0, -'.jsonl'.length));
        const reports: Record<string, string> = {};
        for (const name of reportNames) if (existsSync(`${base}.${name}`)) reports[name] = readFileSync(`${base}.${name}`, 'utf8');
        return { name: file, lines: splitRecording(readFileSync(join(fixtures, file))), reports };
      });
    const foldsFile = join(dir, 'folds.ts');
    const folds = existsSync(foldsFile) ? ((await import(foldsFile)) as { folds: readonly RecordFold[] }).folds : [];
    out.push({ slug: manifest.slug, adapter, folds, recordings });
  }
  return out;
}

const SUBJECTS = await subjects();

function streamText(lines: readonly Buffer[]): string {
  return lines.map((l, i) => `  ${i + 1}: ${preview(l.toString('utf8'), 300)}`).join('\n');
}

function fail(what: string, recording: Recording, lines: readonly Buffer[], violations: string[]): never {
  throw new Error(`${what} (${recording.name}):\n- ${violations.join('\n- ')}\nstream:\n${streamText(lines)}`);
}

function check<T extends unknown[]>(property: fc.IProperty<T>): void {
  fc.assert(property, { seed: SEED, numRuns: RUNS, path: process.env.FUZZ_PATH });
}

it('finds every structured harness through the registry, each with recordings', () => {
  const structured = listHarnesses().filter((h) => h.manifest.strategy === 'structured').map((h) => h.manifest.slug);
  expect(SUBJECTS.map((s) => s.slug)).toEqual(structured);
  for (const subject of SUBJECTS) expect(subject.recordings.length, subject.slug).toBeGreaterThan(0);
});

describe.each(SUBJECTS.map((s) => [s.slug, s] as const))('%s translator', (_slug, subject) => {
  const { adapter, folds, recordings } = subject;
  // By name, so a counterexample names the recording instead of printing its bytes.
  const byName = new Map(recordings.map((r) => [r.name, r]));
  const recordingArb = fc.constantFrom(...byName.keys());

  it('its own recordings: valid events, every silent line accounted for, its folds really silent', () => {
    for (const recording of recordings) {
      const t = translate(adapter, recording.lines, recording.reports);
      const violations = [
        ...contractViolations(t),
        ...lostLines(adapter, recording.lines, recording.reports, folds, t),
        ...foldViolations(adapter, recording.lines, recording.reports, folds, t),
      ];
      if (violations.length > 0) fail('unmutated recording', recording, recording.lines, violations);
    }
  });

  it('hostile records (wrong types, missing fields, duplicated/moved/dropped lines, huge and deep values, invalid UTF-8): nothing thrown, valid events, no line lost', { timeout: TIMEOUT_MS }, () => {
    check(
      fc.property(recordingArb, planArb, (name: string, plan: Mutation[]) => {
        const recording = byName.get(name)!;
        const lines = applyPlan(recording.lines, plan);
        const t = translate(adapter, lines, recording.reports);
        const violations = [...contractViolations(t), ...lostLines(adapter, lines, recording.reports, folds, t)];
        if (violations.length > 0) fail('hostile stream', recording, lines, violations);
      }),
    );
  });

  it('a wrong-typed field invents no value: events and summary only lose what the original (or the stream without that record) reported', { timeout: TIMEOUT_MS }, () => {
    check(
      fc.property(recordingArb, wrongTypeArb, (name: string, mutation: Mutation) => {
        const recording = byName.get(name)!;
        const lines = applyPlan(recording.lines, [mutation]);
        const at = lines.findIndex((line, i) => !line.equals(recording.lines[i]!));
        const original = translate(adapter, recording.lines, recording.reports);
        const references = at === -1 ? [original] : [original, translate(adapter, recording.lines.toSpliced(at, 1), recording.reports)];
        const mutated = translate(adapter, lines, recording.reports);
        const violations = [...contractViolations(mutated), ...inventions(mutated, references)];
        if (violations.length > 0) fail('wrong-typed field', recording, lines, violations);
      }),
    );
  });

  it('a stream cut short (the harness killed mid-tool) invents no value: calls without a result carry no outcome', { timeout: TIMEOUT_MS }, () => {
    check(
      fc.property(recordingArb, fc.nat({ max: 1_000_000 }), (name: string, cut: number) => {
        const recording = byName.get(name)!;
        const lines = recording.lines.slice(0, cut % (recording.lines.length + 1));
        const original = translate(adapter, recording.lines, recording.reports);
        const mutated = translate(adapter, lines, recording.reports);
        const violations = [...contractViolations(mutated), ...inventions(mutated, [original])];
        if (violations.length > 0) fail(`stream cut after ${lines.length} lines`, recording, lines, violations);
      }),
    );
  });
});
