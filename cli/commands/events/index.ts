// `tcab events follow|tail`: read normalized events back from NATS JetStream.
import type { Command } from 'commander';
import { Option } from 'commander';
import { HARNESS_EVENT_TYPES } from '../../../shared/events.ts';
import type { HarnessEventType } from '../../../shared/events.ts';
import { parseRunId } from '../../../shared/run-id.ts';
import { readRunStream } from '../../../nats/reader.ts';
import type { StreamItem } from '../../../nats/reader.ts';
import { checkServerUrls, shownServers } from '../../../nats/server-urls.ts';
import { natsSettingsFromEnv } from '../../../nats/settings.ts';
import type { NatsSettings } from '../../../nats/settings.ts';
import { createEventWriter, outputDrained, resolveFormat } from '../../../shared/format/event-writer.ts';
import type { EventFormat, EventWriter } from '../../../shared/format/event-writer.ts';
import { formatRunResult } from '../../../shared/format/run-result.ts';
import { anotherAttemptMayFollow } from '../../../shared/run.ts';
import type { RunResult } from '../../../shared/run.ts';
import { noNextAttemptMessage } from '../../../nats/next-attempt.ts';
import { nextAttemptOption, nextAttemptWithinMs } from '../next-attempt-option.ts';
import { EXIT, InfrastructureError } from '../../../shared/exit-codes.ts';
import { OUTCOME_EXIT } from '../../../shared/outcome-exit.ts';

interface FollowOptions {
  nats: string;
  type?: HarnessEventType;
  json?: boolean;
  pretty?: boolean;
  nextAttemptTimeout?: string;
}

const natsOption = () => new Option('--nats <url>', 'NATS server (several: comma-separated)').env('TCAB_NATS_URL').default('nats://127.0.0.1:4222');
const typeOption = () => new Option('--type <type>', 'only this event type').choices(HARNESS_EVENT_TYPES);

/** `--nats` (or TCAB_NATS_URL) with the credentials of TCAB_NATS_*; a value that is not a URL is exit 2. */
function settingsOf(nats: string): NatsSettings {
  checkServerUrls(nats.split(',').map((s) => s.trim()), '--nats');
  return natsSettingsFromEnv(process.env, nats, '--nats')!;
}

/** A message that is not a valid event: said on stderr (bounded), while stdout gets it as an `unknown` event. */
function warnInvalid(item: Extract<StreamItem, { kind: 'invalid' }>): void {
  const where = [item.runId && `run ${item.runId}`, item.seq && `seq ${item.seq}`].filter(Boolean).join(', ');
  process.stderr.write(`tcab: the message on ${item.subject}${where ? ` (${where})` : ''} is not a valid ${item.isResult ? 'result' : 'event'}: ${item.reason}; shown as an unknown event\n`);
}

export function registerEventsCommands(program: Command): void {
  const events = program.command('events').description('read run events from NATS');
  registerFollowCommand(events);
  registerTailCommand(events);
}

function registerFollowCommand(events: Command): void {
  events
    .command('follow')
    .description("replay a run's events from the first one, follow live, stop at its result")
    .argument('<run-id>', 'the run to follow (letters, digits, "-" and "_")')
    .addOption(natsOption())
    .addOption(typeOption())
    .addOption(new Option('--json', 'NDJSON (default when piped)').conflicts('pretty'))
    .addOption(new Option('--pretty', 'human view (default on a terminal)'))
    .addOption(nextAttemptOption())
    .addHelpText(
      'after',
      '\nExit status: the run outcome (0 succeeded, 1 harness failed, 3 infrastructure, 4 timed out, 130 cancelled or interrupted);\n2 a bad run id or option; 3 also when NATS cannot be reached or the run\'s result record is invalid.\nNo next attempt within --next-attempt-timeout: the status of the last result (3), after a line saying so (on stderr with --json).',
    )
    .action(followRun);
}

/** Where `events follow` prints: the run it follows, in which format, through which writer. */
interface FollowOutput {
  runId: string;
  format: EventFormat;
  writer: EventWriter;
}

/** What `events follow` has read so far: the last result, and the attempt whose events are being printed. */
interface FollowState {
  last?: RunResult;
  attempt?: number;
}

async function followRun(runIdArgument: string, options: FollowOptions): Promise<void> {
  // '*' or 'a.b' would be a subject pattern: following it would wait forever on nothing (or on other runs).
  const runId = parseRunId(runIdArgument, '<run-id>');
  const withinMs = nextAttemptWithinMs(options.nextAttemptTimeout ?? '');
  const format = resolveFormat(options, process.stdout.isTTY === true);
  const out: FollowOutput = { runId, format, writer: createEventWriter(process.stdout, format) };
  const abort = new AbortController();
  process.once('SIGINT', () => abort.abort());
  const state: FollowState = {};
  let standing: RunResult | undefined;
  const onNoNextAttempt = (result: RunResult) => {
    standing = result;
    sayNoNextAttempt(out, result, withinMs);
  };
  try {
    for await (const item of readRunStream({ settings: settingsOf(options.nats), runId, type: options.type, replay: true, untilResult: true, nextAttemptWithinMs: withinMs, onNoNextAttempt, signal: abort.signal })) {
      printFollowed(out, state, item);
      // A slow reader of our output holds the stream back here (bounded memory) instead of piling events up.
      await out.writer.drained();
    }
  } finally {
    await out.writer.close();
  }
  // The run's result: its last attempt's, or one no attempt followed within the bound. Interrupted while another
  // attempt may still come (or before any result): cancelled.
  const final = state.last && !anotherAttemptMayFollow(state.last) ? state.last : standing;
  if (final) process.exitCode = OUTCOME_EXIT[final.outcome];
  else if (abort.signal.aborted) process.exitCode = EXIT.cancelled;
  else throw new InfrastructureError(`the stream from NATS at ${shownServers(options.nats)} ended before run ${runId}'s result`);
}

function sayNoNextAttempt({ runId, format, writer }: FollowOutput, result: RunResult, withinMs: number): void {
  // NDJSON stays events and results on stdout; what tcab says about them goes to stderr, as everywhere.
  if (format === 'json') process.stderr.write(`tcab: run ${runId}: ${noNextAttemptMessage(result, withinMs)}\n`);
  else writer.line(noNextAttemptMessage(result, withinMs));
}

/** One item of the followed run's stream, printed; an invalid result record ends the follow (exit 3). */
function printFollowed({ runId, format, writer }: FollowOutput, state: FollowState, item: StreamItem): void {
  if (item.kind === 'event') {
    // A later attempt's first message (its sequence counts from 1 again): said once, in the human view.
    if (format !== 'json' && item.attempt !== undefined && item.attempt !== state.attempt) writer.line(`── attempt ${item.attempt} ──`);
    state.attempt = item.attempt ?? state.attempt;
    writer.event(item.event);
  } else if (item.kind === 'result') {
    if (format === 'json') writer.line(JSON.stringify({ type: 'result', ...item.result }));
    else writer.line(formatRunResult(item.result, { color: process.stdout.isTTY === true }));
    // An attempt that failed on infrastructure with attempts left: the Run goes again, so follow reads on.
    if (format !== 'json' && anotherAttemptMayFollow(item.result)) writer.line(`attempt ${item.result.attempt!.number} of ${item.result.attempt!.of} failed on infrastructure; the Run tries again`);
    state.last = item.result;
  } else if (item.isResult) {
    throw new InfrastructureError(`run ${runId}: its result record (${item.subject}) is invalid: ${item.reason}`);
  } else {
    warnInvalid(item);
    writer.event(item.event);
  }
}

function registerTailCommand(events: Command): void {
  events
    .command('tail')
    .description('print new events of every run as they are published (Ctrl-C to stop)')
    .addOption(natsOption())
    .addOption(typeOption())
    .addHelpText('after', '\nExit status: 0 when stopped (Ctrl-C); 2 a bad option; 3 when NATS cannot be reached.')
    .action(tailEvents);
}

async function tailEvents(options: FollowOptions): Promise<void> {
  const abort = new AbortController();
  process.once('SIGINT', () => abort.abort());
  for await (const item of readRunStream({ settings: settingsOf(options.nats), type: options.type, replay: false, untilResult: false, signal: abort.signal })) {
    if (item.kind === 'event') process.stdout.write(`${JSON.stringify({ run_id: item.runId, seq: item.seq, ...item.event })}\n`);
    else if (item.kind === 'result') process.stdout.write(`${JSON.stringify({ type: 'result', ...item.result })}\n`);
    else {
      warnInvalid(item);
      process.stdout.write(`${JSON.stringify({ run_id: item.runId, seq: item.seq, subject: item.subject, ...item.event })}\n`);
    }
    await outputDrained(process.stdout);
  }
}
