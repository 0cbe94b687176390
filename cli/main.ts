// `tcab`: the command line. Commands stay thin (parse, call, print); exit codes are one table (exit-codes.ts).
import { Command, CommanderError } from 'commander';
import { registerTranslateCommand } from './commands/translate.ts';
import { registerRunCommand } from './commands/run.ts';
import { registerEventsCommands } from './commands/events/index.ts';
import { registerHarnessesCommands } from './commands/harnesses/index.ts';
import { registerModelsCommands } from './commands/models/index.ts';
import { registerHarnessConfigCommands } from './commands/harness-config.ts';
import { registerNatsAuthCommands } from './commands/nats-auth.ts';
import { registerConsoleCommand } from './commands/console.ts';
import { registerExportCommands } from './commands/export.ts';
import { registerEvalCommands } from './commands/eval/index.ts';
import { EXIT, exitCodeFor, exitCodeHelp } from '../shared/exit-codes.ts';
import { watchForBrokenPipe } from './output/broken-pipe.ts';

export function buildProgram(): Command {
  const program = new Command('tcab')
    .description('Test Cabinet harness layer: run coding-agent CLIs and stream their activity as normalized events')
    .showHelpAfterError()
    .addHelpText('after', exitCodeHelp());
  registerRunCommand(program);
  registerEventsCommands(program);
  registerHarnessesCommands(program);
  registerModelsCommands(program);
  registerHarnessConfigCommands(program);
  registerNatsAuthCommands(program);
  registerConsoleCommand(program);
  registerTranslateCommand(program);
  registerExportCommands(program);
  registerEvalCommands(program);
  return program;
}

/**
 * Commander exits the process itself (status 1) on a parse error of any command that lacks exitOverride, and
 * subcommands only inherit it when it is set before they are created: set it on the whole tree here, so every
 * usage error of every command, however nested, reaches main() as a CommanderError.
 */
function throwInsteadOfExiting(command: Command): Command {
  command.exitOverride();
  for (const sub of command.commands) throwInsteadOfExiting(sub);
  return command;
}

export async function main(argv: string[]): Promise<number> {
  const program = throwInsteadOfExiting(buildProgram());
  try {
    await program.parseAsync(argv, { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok;
  } catch (error) {
    // Commander already printed its message (and the help hint); a non-zero one is always a usage error.
    if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    process.stderr.write(`tcab: ${(error as Error).message}\n`);
    return exitCodeFor(error);
  }
}

if (import.meta.main) {
  watchForBrokenPipe(process.stdout);
  process.exitCode = await main(process.argv.slice(2));
}
