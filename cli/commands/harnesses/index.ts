// `tcab harnesses ...`: one file per subcommand.
import type { Command } from 'commander';
import { registerListCommand } from './list.ts';
import { registerVerifyCommand } from './verify.ts';
import { registerStatusCommand } from './status.ts';

export function registerHarnessesCommands(program: Command): void {
  const group = program.command('harnesses').description('the harness catalogue: list, status, verify');
  registerListCommand(group);
  registerStatusCommand(group);
  registerVerifyCommand(group);
}
