// Every command the README and docs/ show is one the code accepts (issue 37): a `tcab` command line names real
// subcommands and options, `./dev X` and `npm run X` real scripts (and their `--` arguments real bench names, image
// options or tcab commands), `helm --set` real chart values, `kubectl` the chart's real object names, and every file
// a command names exists. A docs command of a kind this check does not know fails it, so a new kind gets a rule.
// The README's first command, `./dev demo`, runs here for real. (docs/cli.md is generated from the help itself.)
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { buildProgram } from '../cli/main.ts';

const ROOT = join(import.meta.dirname, '..');
const PAGES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((p) => p.endsWith('.md') && p !== 'cli.md').map((p) => `docs/${p}`)];
const SCRIPTS = Object.keys((JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts);
const BENCHES = [...readFileSync(join(ROOT, 'bench/main.ts'), 'utf8').matchAll(/want\('([a-z0-9-]+)'\)/g)].map((m) => m[1]!);
const IMAGE_OPTIONS = [...readFileSync(join(ROOT, 'scripts/images/build.sh'), 'utf8').matchAll(/^\s+(?:-h\|)?(--[a-z-]+)\)/gm)].map((m) => m[1]!);
const VALUES = parseYaml(readFileSync(join(ROOT, 'charts/tcab/values.yaml'), 'utf8')) as Record<string, unknown>;
const TEMPLATES = readdirSync(join(ROOT, 'charts/tcab/templates'))
  .map((f) => readFileSync(join(ROOT, 'charts/tcab/templates', f), 'utf8'))
  .join('\n');

interface DocsCommand {
  where: string;
  text: string;
}

/** Commands in the pages' shell blocks (continuations joined, comments dropped) and in their inline code spans. */
function docsCommands(): DocsCommand[] {
  const out: DocsCommand[] = [];
  for (const page of PAGES) {
    const lines = readFileSync(join(ROOT, page), 'utf8').split('\n');
    let fence: string | undefined;
    let pending = '';
    lines.forEach((line, i) => {
      const where = `${page}:${i + 1}`;
      const opening = /^\s*```(\S*)/.exec(line);
      if (opening) {
        fence = fence === undefined ? opening[1] : undefined;
        return;
      }
      if (fence === 'sh') {
        const code = (pending + line.replace(/(^|\s)#\s.*$/, '')).trim();
        if (code.endsWith('\\')) pending = code.slice(0, -1) + ' ';
        else {
          pending = '';
          if (code !== '') out.push({ where, text: code });
        }
      } else if (fence === undefined) {
        for (const [, span] of line.matchAll(/`([^`]+)`/g)) {
          // (`tcab console: log in: …` is what a command prints, not a command)
          if (/^(tcab|\.\/dev|npm|helm|kubectl|docker)( |$)/.test(span!) && !/^tcab [a-z-]+:/.test(span!)) out.push({ where, text: span!.replaceAll('\\|', '|') });
        }
      }
    });
  }
  return out;
}

/** A command's words (quotes and `$(...)` kept whole), `[optional]` brackets and `a|b` alternatives opened up. */
function words(text: string): string[] {
  let guarded = '';
  let quote: string | undefined;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quote) quote = ch === quote ? undefined : quote;
    else if (ch === "'" || ch === '"') quote = ch;
    else if (ch === '$' && text[i + 1] === '(') depth++;
    else if (ch === ')' && depth > 0) depth--;
    const inside = quote !== undefined || depth > 0;
    guarded += inside && ch === ' ' ? '\u0000' : inside && ch === '|' ? '\u0001' : ch;
  }
  return guarded
    .split(/\s+/)
    .flatMap((w) => w.split('|'))
    .map((w) => w.replace(/^\[+|\]+$/g, '').replaceAll('\u0000', ' ').replaceAll('\u0001', '|'))
    .filter((w) => w !== '' && w !== '...');
}

/** Each flag of a command, and whether it takes a value. */
function flagsOf(command: Command): [string, boolean][] {
  return command.options.flatMap((o) => [o.long, o.short].filter((f) => f !== undefined).map((f): [string, boolean] => [f, o.required || o.optional]));
}

function subtree(command: Command): Command[] {
  return [command, ...command.commands.flatMap(subtree)];
}

/**
 * What is wrong with a `tcab` command line (the words after `tcab`), checked against the real program's tree.
 * Subcommand words must name subcommands; a flag must belong to the command family the line is about (its top-level
 * command's whole subtree, or the program itself), since synopsis lines list alternatives (`get [--json]|set <n>`).
 */
function tcabProblems(args: string[]): string[] {
  const program = buildProgram();
  let command: Command = program;
  const known = new Map<string, boolean>([['--help', false], ['-h', false], ...flagsOf(program)]);
  const found: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const word = args[i]!;
    if (word.startsWith('-')) {
      const flag = word.split('=')[0]!;
      if (flag === '-' || flag === '--') continue;
      if (!known.has(flag)) found.push(`\`${command.name()}\` has no option ${flag}`);
      else if (known.get(flag) === true && !word.includes('=')) i++; // skip the option's value
    } else if (word.startsWith('<')) {
      if (command === program) return found; // a placeholder for any command
    } else {
      const sub = command.commands.find((c) => c.name() === word || c.aliases().includes(word));
      if (sub && command === program) for (const c of subtree(sub)) for (const [flag, takesValue] of flagsOf(c)) known.set(flag, takesValue);
      if (sub) command = sub;
      else if (command.commands.length > 0 && command.registeredArguments.length === 0) return [...found, `\`${command.name()}\` has no subcommand \`${word}\``];
    }
  }
  return found;
}

function hasValue(path: string): boolean {
  let node: unknown = VALUES;
  for (const key of path.split('.')) {
    if (node === null || typeof node !== 'object' || !(key in node)) return false;
    node = (node as Record<string, unknown>)[key];
  }
  return true;
}

/** What is wrong with one docs command; throws for a kind of command this check has no rule for. */
function problems(text: string): string[] {
  const all = words(text).filter((w) => w !== '&');
  const start = all.findIndex((w) => !/^[A-Z_][A-Z0-9_]*=/.test(w)); // `VAR=value command`: the command
  const [tool, ...rest] = all.slice(start);
  const afterDashes = rest.includes('--') ? rest.slice(rest.indexOf('--') + 1) : [];
  const files = rest.filter((w) => /^(scripts|deploy|charts|harnesses|test|docs)\//.test(w)).filter((f) => !existsSync(join(ROOT, f)));
  // The chart names its objects <release>-tcab-<suffix>; the docs install it as release `tcab`.
  const objects = [...text.matchAll(/tcab-tcab-([a-z-]+)/g)].map((m) => m[1]!).filter((suffix) => !TEMPLATES.includes(`-${suffix}`));
  const found = [...files.map((f) => `no file ${f}`), ...objects.map((suffix) => `no chart object named *-${suffix}`)];
  switch (tool) {
    case 'tcab':
      return [...found, ...tcabProblems(rest)];
    case './dev':
    case 'npm': {
      const script = tool === 'npm' ? (rest[0] === 'run' ? rest[1] : undefined) : rest[0];
      if (script === undefined) return found; // bare `npm`
      if (!SCRIPTS.includes(script)) return [...found, `no npm script ${script}`];
      if (script === 'tcab') return [...found, ...tcabProblems(afterDashes)];
      if (script === 'bench') return [...found, ...afterDashes.filter((b) => !BENCHES.includes(b)).map((b) => `no bench ${b}`)];
      if (script === 'images') return [...found, ...afterDashes.filter((w) => w.startsWith('--') && !IMAGE_OPTIONS.includes(w)).map((w) => `no images option ${w}`)];
      return found;
    }
    case 'helm': {
      const keys = rest.flatMap((w, i) => (rest[i - 1] === '--set' || rest[i - 1] === '--set-json' ? [w.replace(/^'/, '').split('=')[0]!] : []));
      return [...found, ...keys.filter((k) => !hasValue(k)).map((k) => `no chart value ${k}`)];
    }
    case 'kubectl':
    case 'echo':
    case 'docker':
    case 'export':
      return found;
    default:
      throw new Error(`a docs command of a kind test/docs-commands.test.ts has no rule for: ${text}`);
  }
}

describe('the commands in the README and docs/', () => {
  const commands = docsCommands();

  it('are found (the extraction itself works)', () => {
    const texts = commands.map((c) => c.text);
    expect(texts).toContain('./dev demo');
    expect(texts).toContain('./dev test');
    expect(texts.filter((t) => t.startsWith('tcab ')).length).toBeGreaterThan(20);
  });

  it('each names real subcommands, options, scripts, chart values and files', () => {
    const wrong = commands.flatMap(({ where, text }) => {
      try {
        return problems(text).map((p) => `${where}: ${p} (in \`${text}\`)`);
      } catch (error) {
        return [`${where}: ${(error as Error).message}`];
      }
    });
    expect(wrong).toEqual([]);
  });

  it('the check itself catches a wrong subcommand, option, script, bench, value and file', () => {
    expect(problems('tcab harness list')).toEqual(['`tcab` has no subcommand `harness`']);
    expect(problems('tcab run --harnes gg')).toEqual(['`run` has no option --harnes']);
    expect(problems('tcab events follow|tail --bogus')).toEqual(['`follow` has no option --bogus']);
    expect(problems('tcab harness-config --url http://127.0.0.1:8080 get --json')).toEqual([]);
    expect(problems('TCAB_X=$(kubectl get secret tcab-tcab-nope-token) tcab harness-config get')).toEqual(['no chart object named *-nope-token']);
    expect(problems('./dev demos')).toEqual(['no npm script demos']);
    expect(problems('npm run bench -- e3e')).toEqual(['no bench e3e']);
    expect(problems('./dev images -- --pushh x')).toEqual(['no images option --pushh']);
    expect(problems('helm upgrade tcab charts/tcab --set driver.nope=1')).toEqual(['no chart value driver.nope']);
    expect(problems('docker build -f deploy/images/Dockerfile.nope .')).toEqual(['no file deploy/images/Dockerfile.nope']);
    expect(problems('kubectl get secret tcab-tcab-nope-token')).toEqual(['no chart object named *-nope-token']);
    expect(() => problems('curl http://127.0.0.1/')).toThrow(/has no rule for: curl/);
  });

  it('`./dev demo` (the README\'s first command) runs the main job on the embedded default and succeeds', () => {
    const out = execFileSync('./dev', ['demo'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 300_000 });
    expect(out).toMatch(/probe_harness completed Claude Code \d+\.\d+\.\d+/);
    expect(out).toMatch(/command\s+✓ printf 'hello\\n' > hello\.txt && cat hello\.txt/);
    expect(out).toMatch(/── run run-\S+: succeeded — 1 session\(s\) completed/);
    expect(out).toMatch(/usage\s+input \d+ · output \d+/);
  }, 300_000);
});
