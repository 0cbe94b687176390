// Renders docs/cli.md from the commands' own `--help` (issue 37): every command and subcommand of `tcab`, in the
// order the program registers them, exactly as `tcab <command> --help` prints it at a fixed width. The page is one of
// the generated files (scripts/generated-files.ts), so `npm run generate` writes it and a test fails when a command's
// help changes and the page was not regenerated.
import type { Command } from 'commander';
import { buildProgram } from '../cli/main.ts';

/** The width the help is wrapped at, independent of the terminal that runs the generator. */
const HELP_WIDTH = 100;

/** The help text `tcab <path> --help` prints, with its before/after help text, at HELP_WIDTH columns. */
function helpText(command: Command): string {
  let out = '';
  // Settings are per command (a subcommand inherits them only at creation): set them on the whole tree.
  for (let c: Command | null = command; c; c = c.parent) {
    c.configureOutput({
      writeOut: (s) => {
        out += s;
      },
      writeErr: (s) => {
        out += s;
      },
      getOutHelpWidth: () => HELP_WIDTH,
      getErrHelpWidth: () => HELP_WIDTH,
      getOutHasColors: () => false,
      getErrHasColors: () => false,
    });
  }
  command.outputHelp();
  return out;
}

function commandPath(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

function walk(command: Command): Command[] {
  return [command, ...command.commands.flatMap((sub) => walk(sub))];
}

export function renderCliReference(): string {
  const commands = walk(buildProgram()).filter((c) => c.name() !== 'help');
  const sections = commands.map((c) => {
    const path = commandPath(c);
    return `## \`${path}\`\n\n\`\`\`text\n$ ${path} --help\n${helpText(c).trimEnd()}\n\`\`\`\n`;
  });
  return [
    '# CLI reference',
    '',
    "Every `tcab` command's and subcommand's `--help`, generated from the commands themselves by `npm run generate`",
    '(scripts/cli-reference.ts; a test fails when this page and the help differ). Do not edit by hand. The commands',
    'at a glance, exit statuses, authentication and settings are in [running.md](running.md).',
    '',
    ...commands.map((c) => `- [\`${commandPath(c)}\`](#${commandPath(c).replaceAll(' ', '-')})`),
    '',
    ...sections,
  ].join('\n');
}
