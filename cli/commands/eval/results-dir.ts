// An evaluation's results directory, the state of `tcab eval run`: evaluation.json (its name and spec, every test
// case inline, and where those of a directory or git were read), one folder
// per slot (runs/<Run name>/: result.json, events.ndjson, atif.json) and summary.json / summary.csv. A slot is done
// when its result.json holds a result that counts; `--resume DIR` runs the others again, so a killed evaluation
// loses only the runs that were in flight.
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { InvalidInputError } from '../../../shared/errors.ts';
import { RunResult } from '../../../shared/run.ts';
import { InlineEvaluationSpec } from '../../../shared/evaluation/schema.ts';
import type { RunSlot } from '../../../shared/evaluation/slots.ts';
import type { EvaluationDocument } from './document.ts';

/** Where the test cases of a directory or git source were read when the evaluation began (sources.ts). */
const Provenance = z.union([
  z.strictObject({ index: z.int().nonnegative(), directory: z.string() }),
  z.strictObject({ index: z.int().nonnegative(), git: z.strictObject({ url: z.string(), ref: z.string().optional(), path: z.string().optional(), commit: z.string() }) }),
]);

/**
 * evaluation.json: the spec with every test case inline, those of a directory or git as they were read when the
 * evaluation began (and where: `sources`), so a resume runs the same test cases whatever the directory or the branch
 * holds by then.
 */
const Stored = z.strictObject({ name: z.string(), spec: InlineEvaluationSpec, sources: z.array(Provenance).optional() });

/**
 * Outcomes a resume runs again: a cancel (the user's Ctrl-C, or the evaluation killed) and an infrastructure
 * failure say nothing of the harness or the model. Every other result stands, scored or not.
 */
const RUN_AGAIN: ReadonlySet<RunResult['outcome']> = new Set(['cancelled', 'infrastructure_failed']);

/** Writes `file` whole or not at all (a killed evaluation leaves no half-written JSON). */
function writeAtomically(file: string, text: string): void {
  const temporary = `${file}.partial`;
  writeFileSync(temporary, text);
  renameSync(temporary, file);
}

export class ResultsDir {
  readonly dir: string;
  private constructor(dir: string) {
    this.dir = dir;
  }

  /** A new results directory for `doc`; one that exists and is not empty is refused (resume it instead). */
  static create(dir: string, doc: EvaluationDocument): ResultsDir {
    if (existsSync(dir) && readdirSync(dir).length > 0) throw new InvalidInputError('--out', `${dir} exists and is not empty: give another directory, or --resume ${dir}`);
    mkdirSync(join(dir, 'runs'), { recursive: true });
    writeAtomically(join(dir, 'evaluation.json'), `${JSON.stringify({ name: doc.name, spec: doc.spec, ...(doc.sources ? { sources: doc.sources } : {}) }, null, 2)}\n`);
    return new ResultsDir(dir);
  }

  /** The results directory of an evaluation begun before, with the evaluation it holds. */
  static open(dir: string): { results: ResultsDir; doc: EvaluationDocument } {
    let stored: unknown;
    try {
      stored = JSON.parse(readFileSync(join(dir, 'evaluation.json'), 'utf8'));
    } catch (cause) {
      throw new InvalidInputError('--resume', `${dir} is not an evaluation's results directory (no readable evaluation.json: ${(cause as Error).message})`, { cause });
    }
    const parsed = Stored.safeParse(stored);
    if (!parsed.success) throw new InvalidInputError('--resume', `${join(dir, 'evaluation.json')} is not an evaluation: ${parsed.error.issues[0]?.message}`);
    return { results: new ResultsDir(dir), doc: parsed.data };
  }

  runDir(slot: RunSlot): string {
    return join(this.dir, 'runs', slot.name);
  }

  /** The slot's stored result, whatever its outcome (undefined: none, or not a valid result). */
  storedResult(slot: RunSlot): RunResult | undefined {
    let text: string;
    try {
      text = readFileSync(join(this.runDir(slot), 'result.json'), 'utf8');
    } catch {
      return undefined;
    }
    try {
      const parsed = RunResult.safeParse(JSON.parse(text));
      return parsed.success ? parsed.data : undefined;
    } catch {
      return undefined;
    }
  }

  /** Whether the slot's stored result stands (a resume does not run it again). */
  isDone(slot: RunSlot): boolean {
    const result = this.storedResult(slot);
    return result !== undefined && !RUN_AGAIN.has(result.outcome);
  }

  /** An empty folder for the slot's run (what an earlier attempt left is removed). */
  prepare(slot: RunSlot): string {
    const dir = this.runDir(slot);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    return dir;
  }

  writeResult(slot: RunSlot, result: RunResult): void {
    writeAtomically(join(this.runDir(slot), 'result.json'), `${JSON.stringify(result, null, 2)}\n`);
  }

  writeSummary(summary: unknown, csv: string): void {
    writeAtomically(join(this.dir, 'summary.json'), `${JSON.stringify(summary, null, 2)}\n`);
    writeAtomically(join(this.dir, 'summary.csv'), csv);
  }
}
