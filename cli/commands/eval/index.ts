// `tcab eval run`: an evaluation (a harness x model x test-case matrix with repeats) on this machine, with no
// cluster: the runs at most --parallel at once, a line per run as it ends and the table at the end on a terminal
// (NDJSON on a pipe), a results directory that --resume continues.
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { Option } from 'commander';
import pc from 'picocolors';
import { InvalidInputError } from '../../../shared/errors.ts';
import { EXIT } from '../../../shared/exit-codes.ts';
import { evaluationCsv, formatEvaluationTable } from '../../../shared/evaluation/format.ts';
import type { EvaluationStatus } from '../../../shared/evaluation/schema.ts';
import { onBrokenPipe } from '../../output/broken-pipe.ts';
import { readEvaluationDocument } from './document.ts';
import type { EvaluationDocument } from './document.ts';
import { runEvaluationLocally } from './local-run.ts';
import type { FinishedRun } from './local-run.ts';
import { ResultsDir } from './results-dir.ts';
import { registerClusterEvalCommands } from './cluster.ts';
import { formatEta, liveBoard } from './live-board.ts';

interface EvalRunOptions {
  stub?: boolean;
  parallel: string;
  out?: string;
  resume?: string;
  json?: boolean;
  pretty?: boolean;
}

export function registerEvalCommands(program: Command): void {
  const group = program.command('eval').description('evaluations: a harness x model x test-case matrix, run and compared');
  group
    .command('run')
    .description('run an evaluation here (no cluster): every slot of its matrix, a results directory, the comparison table')
    .argument('[file]', 'the evaluation: YAML or JSON, an Evaluation object (kind, metadata.name, spec) or its spec alone; test cases inline, or from a directory or git (testCasesFrom), read here')
    .option('--stub', 'run every harness offline against the built-in stub model')
    .option('--parallel <n>', 'runs at once', '1')
    .option('--out <dir>', 'results directory (default: ./tcab-eval-<name>-<time>)')
    .option('--resume <dir>', "continue the evaluation in this results directory: only slots without a standing result run (a cancelled or infrastructure-failed run is run again)")
    .addOption(new Option('--json', 'NDJSON: a line per finished run, then the summary (default when stdout is not a terminal)').conflicts('pretty'))
    .addOption(new Option('--pretty', 'a line per finished run and the table (default on a terminal)'))
    .addHelpText(
      'after',
      `
Writes <dir>/evaluation.json (every test case, those of a directory or git as read now, with the git commit),
<dir>/runs/<run>/{result.json,events.ndjson,atif.json}, <dir>/summary.json and <dir>/summary.csv. Exit status: 0 every run ended, 3 some ended on infrastructure (--resume runs them again),
130 cancelled (--resume continues).`,
    )
    .action((file: string | undefined, options: EvalRunOptions) => runEvaluationHere(file, options));
  registerClusterEvalCommands(group);
}

async function runEvaluationHere(file: string | undefined, options: EvalRunOptions): Promise<void> {
  const parallel = Number(options.parallel);
  if (!Number.isInteger(parallel) || parallel < 1 || parallel > 64) throw new InvalidInputError('--parallel', 'must be a whole number from 1 to 64');
  const { doc, results } = openResults(file, options);
  const json = options.json === true || (options.pretty !== true && process.stdout.isTTY !== true);
  const abort = new AbortController();
  const stop = () => abort.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const restorePipeReaction = onBrokenPipe(stop);
  const started = Date.now();
  // On a terminal: the whole evaluation and each cell, live (live-board.ts), each finished run's line above them.
  const board = !json && process.stdout.isTTY === true ? liveBoard(started, !process.env.NO_COLOR) : undefined;
  try {
    if (!json) process.stderr.write(pc.dim(`tcab: evaluation ${doc.name}: results in ${results.dir}\n`));
    const outcome = await runEvaluationLocally({
      doc,
      results,
      parallel,
      stub: options.stub === true,
      env: process.env,
      signal: abort.signal,
      onRun: (run) => {
        if (json) return void process.stdout.write(`${JSON.stringify(runLine(run))}\n`);
        if (!board) return void process.stdout.write(`${progressLine(run, started)}\n`);
        board.finished(progressLine(run, started), run.status);
      },
    });
    board?.done();
    results.writeSummary(outcome.status, evaluationCsv(outcome.status));
    if (json) process.stdout.write(`${JSON.stringify({ type: 'summary', evaluation: doc.name, results_dir: results.dir, ran: outcome.ran, kept: outcome.kept, status: outcome.status })}\n`);
    else process.stdout.write(`${formatEvaluationTable(outcome.status, { color: process.stdout.isTTY === true })}\n`);
    process.exitCode = exitCodeOf(outcome.status, abort.signal.aborted);
  } finally {
    board?.done();
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    restorePipeReaction();
  }
}

/** A new results directory for FILE, or the one --resume names (with FILE, it must hold the same evaluation). */
function openResults(file: string | undefined, options: EvalRunOptions): { doc: EvaluationDocument; results: ResultsDir } {
  if (options.resume) {
    if (options.out) throw new InvalidInputError('--out', 'goes without --resume (the results stay in the directory resumed)');
    const opened = ResultsDir.open(options.resume);
    // The test cases as read now (a directory, a branch) against those stored: the same evaluation or refused.
    if (file !== undefined) {
      const now = readEvaluationDocument(file);
      if (JSON.stringify({ name: now.name, spec: now.spec }) !== JSON.stringify({ name: opened.doc.name, spec: opened.doc.spec })) {
        throw new InvalidInputError('--resume', `${file} is not the evaluation ${options.resume} holds (its spec or the test cases of its sources differ): resume without the file (the test cases stored there run), or start a new one`);
      }
    }
    return { doc: opened.doc, results: opened.results };
  }
  if (file === undefined) throw new InvalidInputError('file', 'give the evaluation file (or --resume DIR)');
  const doc = readEvaluationDocument(file);
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-');
  return { doc, results: ResultsDir.create(resolve(options.out ?? `tcab-eval-${doc.name}-${stamp}`), doc) };
}

/** One finished run on a pipe: which slot, its outcome, verdict and cost, and the progress. */
function runLine({ slot, result, status }: FinishedRun) {
  return {
    type: 'run',
    run: slot.name,
    harness: slot.cell.harness,
    model: slot.cell.model,
    test_case: slot.testCase,
    repeat: slot.repeat,
    outcome: result.outcome,
    check: result.check ?? null,
    actual_cost_usd: result.actual_cost_usd,
    comparable_cost_usd: result.comparable_cost_usd,
    final: status.runs!.final,
    total: status.runs!.total,
  };
}

/** One finished run on a terminal, with the whole evaluation's progress and an estimate of the time left. */
function progressLine({ slot, result, status }: FinishedRun, started: number): string {
  const { final, total } = status.runs!;
  const verdict = result.check ? (result.check.passed ? pc.green('passed') : pc.red('failed')) : result.outcome === 'succeeded' ? 'no check' : pc.yellow(result.outcome);
  const cost = result.actual_cost_usd === null ? '' : ` · $${result.actual_cost_usd.toFixed(4)}`;
  const seconds = (Date.parse(result.finished_at) - Date.parse(result.started_at)) / 1000;
  const cells = status.cells!;
  const passed = cells.reduce((n, c) => n + c.passed, 0);
  const scored = cells.reduce((n, c) => n + c.scored, 0);
  const left = total - final;
  const eta = left === 0 ? '' : ` · ETA ${formatEta(((Date.now() - started) / final) * left)}`;
  return `[${final}/${total}] ${slot.cell.harness} × ${slot.cell.model} · ${slot.testCase} #${slot.repeat}: ${verdict} (${seconds.toFixed(1)}s${cost}) · ${passed}/${scored} passed so far${eta}`;
}

function exitCodeOf(status: EvaluationStatus, cancelled: boolean): number {
  if (cancelled) return EXIT.cancelled;
  return status.cells!.some((c) => c.infrastructureFailed > 0) ? EXIT.infrastructureFailed : EXIT.ok;
}
