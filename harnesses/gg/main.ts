// `gg`: the project's own harness as a process. Prints normalized events as NDJSON on stdout and, last, one
// `{"gg_result": …}` line with usage; exit 0 when the agent finished, 1 on a model error, 4 on a budget, 130/143
// when SIGINT/SIGTERM stopped it (its running commands killed, the usage so far still reported).
// Invoked by the driver like any harness CLI (as the run user, in the workspace, with a minimal environment);
// the key arrives as TCAB_GG_API_KEY and an endpoint override as TCAB_GG_BASE_URL.
import { Command } from 'commander';
import { homedir } from 'node:os';
import { languageModel } from './model.ts';
import { runAgent } from './loop.ts';
import type { DraftEvent } from '../../shared/events.ts';
import { GG_VERSION } from './descriptor.ts';

export async function ggMain(argv: string[]): Promise<number> {
  const program = new Command('gg')
    .version(`${GG_VERSION} (gg)`, '--version')
    .requiredOption('--model <id>', 'model id (claude-*, anthropic/*, gpt-*, openai/*, openrouter/<vendor>/<model>)')
    .requiredOption('--prompt <text>', 'the task')
    .option('--max-turns <n>', 'model calls at most', '50')
    .option('--max-runtime <seconds>', 'the session budget', '1800')
    .exitOverride();
  program.parse(argv, { from: 'user' });
  const o = program.opts<{ model: string; prompt: string; maxTurns: string; maxRuntime: string }>();
  const apiKey = process.env.TCAB_GG_API_KEY;
  if (!apiKey) {
    process.stderr.write('gg: TCAB_GG_API_KEY is not set\n');
    return 3;
  }
  const out = (line: unknown) => process.stdout.write(`${JSON.stringify(line)}\n`);
  const emit = (event: DraftEvent) => out({ ...event, timestamp: new Date().toISOString() });
  const stopped = new AbortController();
  let signalled: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    signalled = signal;
    stopped.abort();
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  const result = await runAgent({
    model: languageModel(o.model, apiKey, process.env.TCAB_GG_BASE_URL || undefined),
    prompt: o.prompt,
    workdir: process.cwd(),
    home: homedir(),
    maxTurns: Number(o.maxTurns),
    deadline: Date.now() + Number(o.maxRuntime) * 1000,
    emit,
    signal: stopped.signal,
  });
  process.off('SIGTERM', onSignal);
  process.off('SIGINT', onSignal);
  out({ gg_result: result });
  if (result.stop === 'cancelled') return signalled === 'SIGINT' ? 130 : 143;
  return result.stop === 'completed' || result.stop === 'turn_budget' ? 0 : result.stop === 'error' ? 1 : 4;
}

if (import.meta.main) {
  try {
    process.exitCode = await ggMain(process.argv.slice(2));
  } catch (error) {
    if ((error as { code?: string }).code === 'commander.version' || (error as { code?: string }).code === 'commander.helpDisplayed') process.exitCode = 0;
    else {
      process.stderr.write(`gg: ${(error as Error).message}\n`);
      process.exitCode = 2;
    }
  }
}
