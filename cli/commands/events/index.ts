// `tcab events follow|tail`: read normalized events back from NATS JetStream.
import type { Command } from 'commander';
import { Option } from 'commander';
import { HARNESS_EVENT_TYPES } from '../../../shared/events.ts';
import type { HarnessEventType } from '../../../shared/events.ts';
import { readRunStream } from '../../nats-reader.ts';
import { createEventWriter, resolveFormat } from '../../output/event-writer.ts';
import { formatRunResult } from '../../output/run-result.ts';
import { EXIT } from '../../exit-codes.ts';
import { OUTCOME_EXIT } from '../../../driver/outcome.ts';

interface FollowOptions {
  nats: string;
  type?: HarnessEventType;
  json?: boolean;
  pretty?: boolean;
}

const natsOption = () => new Option('--nats <url>', 'NATS server').env('TCAB_NATS_URL').default('nats://127.0.0.1:4222');
const typeOption = () => new Option('--type <type>', 'only this event type').choices(HARNESS_EVENT_TYPES);

export function registerEventsCommands(program: Command): void {
  const events = program.command('events').description('read run events from NATS');

  events
    .command('follow')
    .description("replay a run's events from the first one, follow live, stop at its result")
    .argument('<run-id>')
    .addOption(natsOption())
    .addOption(typeOption())
    .addOption(new Option('--json', 'NDJSON (default when piped)').conflicts('pretty'))
    .addOption(new Option('--pretty', 'human view (default on a terminal)'))
    .addHelpText('after', '\nExit status: the run outcome (0 succeeded, 1 harness failed, 3 infrastructure, 4 timed out, 130 cancelled).')
    .action(async (runId: string, options: FollowOptions) => {
      const format = resolveFormat(options, process.stdout.isTTY === true);
      const writer = createEventWriter(process.stdout, format);
      const abort = new AbortController();
      process.once('SIGINT', () => abort.abort());
      process.exitCode = EXIT.cancelled;
      for await (const item of readRunStream({ servers: options.nats, runId, type: options.type, replay: true, untilResult: true, signal: abort.signal })) {
        if (item.kind === 'event') writer.event(item.event);
        else if (item.kind === 'invalid') process.stderr.write(`tcab: skipped an invalid message on ${item.subject}: ${item.error}\n`);
        else {
          if (format === 'json') writer.line(JSON.stringify({ type: 'result', ...item.result }));
          else writer.line(formatRunResult(item.result, { color: process.stdout.isTTY === true }));
          process.exitCode = OUTCOME_EXIT[item.result.outcome];
        }
      }
      await writer.close();
    });

  events
    .command('tail')
    .description('print new events of every run as they are published (Ctrl-C to stop)')
    .addOption(natsOption())
    .addOption(typeOption())
    .action(async (options: FollowOptions) => {
      const abort = new AbortController();
      process.once('SIGINT', () => abort.abort());
      for await (const item of readRunStream({ servers: options.nats, type: options.type, replay: false, untilResult: false, signal: abort.signal })) {
        if (item.kind === 'event') process.stdout.write(`${JSON.stringify({ run_id: item.runId, seq: item.seq, ...item.event })}\n`);
        else if (item.kind === 'result') process.stdout.write(`${JSON.stringify({ type: "result", ...item.result })}\n`);
      }
    });
}
