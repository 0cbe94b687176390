// `tcab eval run` on a workstation: every slot of the matrix as a local run (the same executeRun as `tcab run`),
// at most `parallel` at once, each run's events, ATIF trajectory and result in its slot's folder of the results
// directory, the summary written at the end. Slots done before (a resumed evaluation) are not run again.
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import type { WriteStream } from 'node:fs';
import { once } from 'node:events';
import { homedir } from 'node:os';
import { join } from 'node:path';
import PQueue from 'p-queue';
import { executeRun } from '../../../driver/run.ts';
import { startOfflineStub } from '../../../driver/offline-stub.ts';
import type { OfflineStub } from '../../../driver/offline-stub.ts';
import { defaultRunBase } from '../../../driver/run-dirs.ts';
import { resolveRunUser } from '../../../driver/run-user.ts';
import { eventJson } from '../../../driver/sinks/sink.ts';
import type { EventSink, SequencedEvent } from '../../../driver/sinks/sink.ts';
import { resolveHarness } from '../../../harnesses/registry.ts';
import { InvalidInputError } from '../../../shared/errors.ts';
import { RunSpec } from '../../../shared/run.ts';
import type { RunResult } from '../../../shared/run.ts';
import { evaluationSlots } from '../../../shared/evaluation/slots.ts';
import type { RunSlot } from '../../../shared/evaluation/slots.ts';
import { summarizeEvaluation } from '../../../shared/evaluation/summary.ts';
import type { SlotState } from '../../../shared/evaluation/summary.ts';
import type { EvaluationStatus } from '../../../shared/evaluation/schema.ts';
import { AtifFileSink } from '../../output/atif-file.ts';
import type { EvaluationDocument } from './document.ts';
import type { ResultsDir } from './results-dir.ts';

export interface LocalEvaluation {
  doc: EvaluationDocument;
  results: ResultsDir;
  /** Runs at once. */
  parallel: number;
  /** Every run against the built-in stub model (each harness must be able to). */
  stub: boolean;
  env: NodeJS.ProcessEnv;
  /** Stops the evaluation: runs in flight are cancelled (and run again on resume), none is started. */
  signal: AbortSignal;
  /** Where harness folders are (tests); default the project's harnesses/. */
  harnessesRoot?: string;
  /** Each run as it ends, with the evaluation's status so far. */
  onRun?: (run: FinishedRun) => void;
}

export interface FinishedRun {
  slot: RunSlot;
  result: RunResult;
  status: EvaluationStatus;
}

export interface LocalEvaluationOutcome {
  status: EvaluationStatus;
  /** Runs this call made, and slots it found done. */
  ran: number;
  kept: number;
}

export async function runEvaluationLocally(evaluation: LocalEvaluation): Promise<LocalEvaluationOutcome> {
  const { doc, results, signal } = evaluation;
  await refuseUnrunnableCells(evaluation);
  const slots = evaluationSlots(doc.name, doc.spec);
  const todo = new Set(slots.filter((slot) => !results.isDone(slot)));
  // A slot to run again starts pending, not as the cancel or infrastructure failure it ended with before.
  const states = new Map<RunSlot, SlotState>(slots.map((slot) => [slot, stateOf(slot, todo.has(slot) ? undefined : results.storedResult(slot))]));
  const status = () => summarizeEvaluation(doc.spec, [...states.values()]);
  const queue = new PQueue({ concurrency: evaluation.parallel });
  let ran = 0;
  for (const slot of todo) {
    void queue.add(async () => {
      if (signal.aborted) return;
      const result = await runSlot(evaluation, slot);
      ran++;
      states.set(slot, stateOf(slot, result));
      evaluation.onRun?.({ slot, result, status: status() });
    });
  }
  await queue.onIdle();
  return { status: status(), ran, kept: slots.length - todo.size };
}

function stateOf(slot: RunSlot, result: RunResult | undefined): SlotState {
  return { cell: slot.cell, testCase: slot.testCase, final: result !== undefined, ...(result ? { result } : {}) };
}

/** Every cell's harness exists (and with --stub can run offline) before anything runs, naming the matrix entry. */
async function refuseUnrunnableCells(evaluation: LocalEvaluation): Promise<void> {
  for (const [i, { harness, models }] of evaluation.doc.spec.matrix.entries()) {
    for (const model of models) {
      const resolved = await resolveHarness(harness, model, evaluation.harnessesRoot).catch((error: unknown) => {
        throw new InvalidInputError(`matrix[${i}].harness`, (error as Error).message, { cause: error });
      });
      if (evaluation.stub && !resolved.manifest.stub_wire) throw new InvalidInputError('--stub', `${resolved.manifest.name} (matrix[${i}]) cannot run against the stub model: ${resolved.manifest.offline_note ?? 'it needs its vendor backend'}`);
    }
  }
}

/** One slot's run: a fresh folder, its events and trajectory written there, its result stored when it ends. */
async function runSlot(evaluation: LocalEvaluation, slot: RunSlot): Promise<RunResult> {
  const dir = evaluation.results.prepare(slot);
  const spec = RunSpec.parse(slot.spec);
  // The slot names the run; the suffix keeps a resumed slot's run directory apart from a killed one's leftovers.
  const runId = `${slot.name}-${randomBytes(3).toString('hex')}`;
  let stub: OfflineStub | undefined;
  if (evaluation.stub) {
    const { manifest } = await resolveHarness(spec.harness, spec.model, evaluation.harnessesRoot);
    stub = await startOfflineStub(manifest, spec, defaultRunBase(evaluation.env), runId);
  }
  try {
    const result = await executeRun(spec, {
      runId,
      env: evaluation.env,
      sinks: [new EventsFileSink(join(dir, 'events.ndjson')), new AtifFileSink(join(dir, 'atif.json'), spec)],
      user: resolveRunUser(evaluation.env, process.getuid?.() ?? 1000),
      credentialSource: { kind: 'home', home: homedir() },
      stub: stub ? { baseUrl: stub.baseUrl, apiKey: stub.apiKey } : undefined,
      signal: evaluation.signal,
      ...(evaluation.harnessesRoot ? { harnessesRoot: evaluation.harnessesRoot } : {}),
    });
    evaluation.results.writeResult(slot, result);
    return result;
  } finally {
    await stub?.close();
  }
}

/** The run's events as NDJSON in a file (what `tcab run --json` prints), flushed when the run closes its sinks. */
class EventsFileSink implements EventSink {
  private readonly out: WriteStream;
  constructor(file: string) {
    this.out = createWriteStream(file, { mode: 0o600 });
  }

  event(record: SequencedEvent): void {
    this.out.write(`${eventJson(record)}\n`);
  }

  result(): void {}

  async close(): Promise<void> {
    this.out.end();
    await once(this.out, 'finish');
  }
}
