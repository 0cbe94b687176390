// `tcab translate`: turns a recorded raw harness stdout into normalized events (NDJSON when piped, a human view
// on a TTY). The session result goes after the events in the human view; with --json it never mixes with the
// event lines (a --result file, or one JSON object on stderr).
import { createReadStream, readFileSync, writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { Option } from 'commander';
import { getHarness, loadAdapter } from '../../harnesses/registry.ts';
import { priceRun } from '../../shared/cost.ts';
import { loadCatalog } from '../../shared/catalog/load.ts';
import { splitLines, DEFAULT_MAX_LINE_BYTES } from '../../shared/translate/lines.ts';
import { TranslationSession } from '../../shared/translate/session.ts';
import { acpAdapterOf } from '../../shared/translate/acp/adapter.ts';
import type { HarnessEvent } from '../../shared/events.ts';
import { InvalidInputError } from '../../shared/errors.ts';
import { createEventWriter, resolveFormat } from '../../shared/format/event-writer.ts';
import { writeAtifFile } from '../output/atif-file.ts';

interface TranslateOptions {
  harness: string;
  model?: string;
  stderr?: string;
  exitCode: string;
  json?: boolean;
  pretty?: boolean;
  result?: string;
  workdir?: string;
  fullReasoning?: boolean;
  maxLineBytes: string;
  report: string[];
  side: string[];
  protocol: 'stdout' | 'acp';
  atif?: string;
}

/** `--report usage.json=/path/to/file` (or `--side updates=/path`): a name and the file recorded under it. */
function namedFiles(option: string, specs: string[]): [name: string, file: string][] {
  return specs.map((spec) => {
    const at = spec.indexOf('=');
    if (at <= 0 || at === spec.length - 1) throw new InvalidInputError(option, `expected <name>=<file>, got "${spec}"`);
    return [spec.slice(0, at), spec.slice(at + 1)];
  });
}

/** Report files the session wrote beside its stream (e.g. Copilot's usage), by name. */
function readReports(specs: string[]): Record<string, string> {
  return Object.fromEntries(namedFiles('--report', specs).map(([name, file]) => [name, readFileSync(file, 'utf8')]));
}

function intOption(name: string, value: string, min: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new InvalidInputError(name, `must be an integer >= ${min}, got "${value}"`);
  return n;
}

export function registerTranslateCommand(program: Command): void {
  program
    .command('translate')
    .description('translate a recorded harness stdout into normalized events')
    .argument('[file]', 'raw stdout of a harness session ("-" or omitted: standard input)', '-')
    .requiredOption('--harness <slug>', 'the harness that produced the output')
    .option('--model <id>', 'the model the session ran with, for pricing when the transcript does not say')
    .option('--stderr <file>', "the session's recorded stderr (each line becomes a warning)")
    .option('--exit-code <n>', "the harness's exit status (non-zero adds the terminal error)", '0')
    .option('--workdir <dir>', 'the session cwd, to make relative paths absolute')
    .option('--result <file>', 'write the session result as JSON to this file')
    .option('--atif <file>', 'also write the session as an ATIF trajectory (Harbor\'s format) to this file')
    .option('--full-reasoning', 'show reasoning in full (human view)')
    .option('--report <name=file>', "a report file the session wrote beside its stream, e.g. copilot's usage.json (repeatable)", (value: string, all: string[]) => [...all, value], [] as string[])
    .option('--side <name=file>', "a recorded side file's lines, e.g. grok's updates (the driver records them as <session>.<name>; replayed after stdout; repeatable)", (value: string, all: string[]) => [...all, value], [] as string[])
    .addOption(new Option('--protocol <protocol>', "the recording is the harness's stdout stream, or an ACP session (the agent's JSON-RPC, recorded by a run with protocol acp)").choices(['stdout', 'acp']).default('stdout'))
    .option('--max-line-bytes <n>', 'lines longer than this become truncated unknown events', String(DEFAULT_MAX_LINE_BYTES))
    .addOption(new Option('--json', 'NDJSON events (default when stdout is not a terminal)').conflicts('pretty'))
    .addOption(new Option('--pretty', 'human view (default on a terminal)'))
    .addHelpText('after', '\nExample:\n  tcab translate --harness claude session.jsonl --stderr session.err --exit-code 1\n')
    .action(async (file: string, options: TranslateOptions) => {
      const exitCode = intOption('--exit-code', options.exitCode, 0);
      const maxLineBytes = intOption('--max-line-bytes', options.maxLineBytes, 1);
      const reports = readReports(options.report);
      const sides = namedFiles('--side', options.side);
      const own = await loadAdapter(options.harness);
      const adapter = options.protocol === 'acp' ? acpAdapterOf(own) : own;
      const session = new TranslationSession(adapter, { workdir: options.workdir });
      const format = resolveFormat(options, process.stdout.isTTY === true);
      const writer = createEventWriter(process.stdout, format, { fullReasoning: options.fullReasoning === true });
      const translated: HarnessEvent[] = [];
      const emit = (events: HarnessEvent[]) => {
        if (options.atif) translated.push(...events);
        for (const event of events) writer.event(event);
      };

      // Each line costs at most itself (the engine turns any line into events or an `unknown`); a read error
      // costs what follows it: the events translated before it are printed before the error is reported.
      try {
        const input = file === '-' ? process.stdin : createReadStream(file);
        for await (const line of splitLines(input, maxLineBytes)) {
          emit(session.stdout(line));
          await writer.drained();
        }
        for (const [name, sideFile] of sides) {
          for await (const line of splitLines(createReadStream(sideFile), maxLineBytes)) {
            emit(session.side(name, line));
            await writer.drained();
          }
        }
        if (options.stderr) {
          for await (const line of splitLines(createReadStream(options.stderr), maxLineBytes)) {
            emit(session.stderr(line));
            await writer.drained();
          }
        }
      } catch (error) {
        await writer.close();
        throw error;
      }
      const { events, summary } = session.finish({ code: exitCode, signal: null }, reports);
      emit(events);
      const { manifest } = getHarness(options.harness);
      const cost = priceRun({
        model: options.model ?? summary.result.reported_model ?? 'unknown',
        idFamily: manifest.model_ids,
        tokens: summary.result.tokens,
        reportedCostUsd: summary.result.reported_cost_usd,
        // A recorded transcript does not say how it was paid for; API key is the conservative reading
        // (a reported charge is taken, none is not invented).
        authMode: 'api-key',
        catalog: loadCatalog(process.env.TCAB_MODEL_CATALOG || undefined),
      });
      const result = { harness: adapter.slug, ...summary, cost };
      if (options.result) writeFileSync(options.result, `${JSON.stringify(result, null, 2)}\n`);
      if (options.atif) writeAtifFile(options.atif, { events: translated, spec: { harness: adapter.slug, model: options.model ?? summary.result.reported_model }, usage: { tokens: summary.result.tokens, cost_usd: cost.actual_cost_usd } });
      if (format === 'json') {
        if (!options.result) process.stderr.write(`${JSON.stringify(result)}\n`);
      } else {
        writer.summary(result);
      }
      await writer.close();
    });
}
