// One harness session: the CLI spawned as the run user in its own process group with a minimal environment,
// stdout translated line by line as it arrives, stderr surfaced as warnings, the process tree terminated at the
// run's deadline (TERM, then KILL) with an error event saying so. The harness's exit ends the session (see
// runProcess): a background process holding its stdout open costs a warning, not the run.
import { createWriteStream } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readHomeReports, writeHomeFiles } from '../home-files.ts';
import type { HarnessAdapter, Invocation } from '../../shared/adapter.ts';
import { API_KEY_PLACEHOLDER } from '../../shared/adapter.ts';
import { TranslationSession } from '../../shared/translate/session.ts';
import type { SessionSummary } from '../../shared/translate/session.ts';
import { runProcess } from '../process.ts';
import type { ProcessOutcome } from '../process.ts';
import type { StageContext } from './context.ts';
import { quietGapFlusher } from './stderr-flush.ts';
import { SideFileReader } from '../side-files.ts';
import { AcpConversation } from '../acp/client.ts';
import { acpAdapterOf } from '../../shared/translate/acp/adapter.ts';

export interface SessionRun {
  summary: SessionSummary;
  outcome: ProcessOutcome;
}

export async function runSession(
  ctx: StageContext,
  adapter: HarnessAdapter,
  invocation: Invocation,
  binary: string,
  secretEnv: Record<string, string>,
  maxRuntimeSeconds: number,
  record?: { dir: string; name: string },
  acp?: { prompt: string },
): Promise<SessionRun> {
  // The key reaches a config file only when the CLI cannot read it from the environment (see API_KEY_PLACEHOLDER).
  const key = Object.values(secretEnv)[0] ?? '';
  await writeHomeFiles(ctx.dirs.home, ctx.user, invocation.files.map((f) => ({ ...f, content: f.content.replaceAll(API_KEY_PLACEHOLDER, key) })));
  // Raw output as the harness printed it (fixtures, verify): written before translation sees it.
  if (record) await mkdir(record.dir, { recursive: true });
  const rawOut = record ? createWriteStream(join(record.dir, `${record.name}.stdout`)) : undefined;
  const rawErr = record ? createWriteStream(join(record.dir, `${record.name}.stderr`)) : undefined;
  // Over ACP the driver is the agent's client (driver/acp/client.ts) and the agent's JSON-RPC is the raw stream.
  const conversation = acp ? new AcpConversation({ prompt: acp.prompt, cwd: ctx.dirs.workspace, deadline: ctx.deadline }) : undefined;
  const translation = new TranslationSession(acp ? acpAdapterOf(adapter) : adapter, { workdir: ctx.dirs.workspace }, { clock: ctx.clock });
  const emitAll = (events: ReturnType<TranslationSession['stdout']>) => {
    for (const event of events) ctx.emit(event);
  };
  // A stderr diagnostic still open after a quiet gap is published whole (stderr-flush.ts).
  const stderrGap = quietGapFlusher(translation, emitAll, ctx.timers);
  // Side files the CLI writes below HOME: tailed while it runs, their lines translated as they come (side-files.ts).
  const sideRecords = new Map<string, ReturnType<typeof createWriteStream>>();
  const sideFiles = new SideFileReader(ctx.dirs.home, invocation.sideFiles ?? [], {
    line: (name, line) => {
      if (record) {
        let stream = sideRecords.get(name);
        if (!stream) sideRecords.set(name, (stream = createWriteStream(join(record.dir, `${record.name}.${name}`))));
        stream.write(`${line.text}\n`);
      }
      emitAll(translation.side(name, line));
    },
    warning: (message) => ctx.emit({ type: 'warning', timestamp: ctx.clock.now().toISOString(), message, code: 'side_file_unread' }),
  }, ctx.timers);
  await sideFiles.start();
  const [, ...args] = invocation.argv;
  const outcome = await runProcess({
    argv: [binary, ...args],
    cwd: ctx.dirs.workspace,
    // Minimal environment: PATH, HOME, locale, the harness's own variables and the injected key. Nothing else of
    // the driver's environment (NATS credentials, other keys) reaches the harness.
    env: { ...ctx.baseEnv, ...invocation.env, ...secretEnv },
    user: ctx.user,
    stdin: conversation ? 'pipe' : invocation.stdin,
    onStdin: conversation ? (stdin) => conversation.attach(stdin) : undefined,
    end: conversation?.ended.signal,
    deadline: ctx.deadline,
    signal: ctx.signal,
    onStdout: (line) => {
      rawOut?.write(`${line.text}\n`);
      emitAll(translation.stdout(line));
      conversation?.received(line);
    },
    onStderr: (line) => {
      rawErr?.write(`${line.text}\n`);
      emitAll(translation.stderr(line));
      stderrGap.touched();
    },
  });
  stderrGap.stop();
  conversation?.processEnded();
  const turn = conversation ? await conversation.turn : undefined;
  const documents = await sideFiles.stop();
  await Promise.all([rawOut, rawErr, ...sideRecords.values()].map((s) => (s ? new Promise((resolve) => s.end(resolve)) : undefined)));
  if (outcome.spawnError) {
    emitAll(translation.stderr({ text: `cannot start ${binary}: ${outcome.spawnError.message}`, bytes: 0, truncated: false }));
  }
  if (outcome.outputHeldOpen && !outcome.timedOut && !outcome.cancelled) {
    // The session ends with the harness's exit; what it left running in the background is not waited for.
    ctx.emit({ type: 'warning', timestamp: ctx.clock.now().toISOString(), message: `${binary} exited, but a process it started kept its output open; the session ended without waiting for it (teardown kills what is left)`, code: 'output_held_open' });
  }
  const reports = { ...(await readHomeReports(ctx.dirs.home, invocation.reports ?? [])), ...documents };
  if (record) for (const [name, text] of Object.entries(reports)) await writeFile(join(record.dir, `${record.name}.${name}`), text);
  // An ACP agent the driver ended after its turn (it is a server) ended as it should: its turn is the outcome.
  const exit = outcome.ended && turn?.stopReason !== undefined ? { code: 0, signal: null } : { code: outcome.code, signal: outcome.signal };
  if (turn?.failure && !outcome.timedOut && !outcome.cancelled) {
    ctx.emit({ type: 'error', timestamp: ctx.clock.now().toISOString(), message: `the ACP conversation failed: ${turn.failure}`, code: 'acp_failed' });
  }
  const { events, summary } = translation.finish(exit, reports);
  if (turn?.failure) summary.result.is_error = true;
  emitAll(events);
  if (outcome.timedOut) {
    ctx.emit({ type: 'error', timestamp: ctx.clock.now().toISOString(), message: `the run exceeded its maximum runtime of ${maxRuntimeSeconds}s; the harness process group was terminated`, code: 'max_runtime_exceeded' });
  }
  if (outcome.cancelled) {
    ctx.emit({ type: 'error', timestamp: ctx.clock.now().toISOString(), message: 'the run was cancelled; the harness process group was terminated', code: 'cancelled' });
  }
  return { summary, outcome: { ...outcome, ...exit } };
}
