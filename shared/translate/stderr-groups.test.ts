// issue 21: a stack trace or a wrapped diagnostic on stderr is one warning. Table tests on recorded stderr (Cline's
// AI SDK deprecation traces, Gemini's startup notices and API error trace, Node's uncaught exception as gg printed
// it), and a property: the groups are the input, every line, in order.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { continues, groupStderrLines, MAX_GROUP_CHARS, StderrGrouper } from './stderr-groups.ts';

const HARNESSES = join(import.meta.dirname, '..', '..', 'harnesses');
const recorded = (slug: string, file: string) => readFileSync(join(HARNESSES, slug, 'fixtures', file), 'utf8').replace(/\n$/, '').split('\n');
const diagnostics = (groups: string[][]) => groups.filter((g) => g[0]!.trim().length > 0);

describe('continues', () => {
  it.each([
    ['Warning: AI SDK Warning System: To turn off warning logging, set the AI_SDK_LOG_WARNINGS global to false.', '      at iX (/$bunfs/root/chunk-c152qqqg.js:26:46952)', false, true],
    ['Error: boom', 'at main (file:///x.js:1:2)', false, true],
    ["Emitted 'error' event on ChildProcess instance at:", 'something unindented', false, true],
    ["  spawnargs: [ '-c', 'ls' ]", '}', false, true],
    ['(node:24510) [DEP0190] DeprecationWarning: Passing args to a child process with shell option true', '(Use `node --trace-deprecation ...` to show where the warning was created)', false, true],
    ['    ^', 'Error: spawn /bin/sh EACCES', true, true],
    ['}', 'Node.js v24.22.3', true, true],
    ['Error: boom', '    at main (file:///x.js:1:2)', true, true],
    ['      at transform (/$bunfs/root/chunk-c152qqqg.js:44:43027)', 'DeprecationWarning: AI SDK Warning (openai-compatible.chat / mock-model)', true, false],
    ['      at transform (/$bunfs/root/chunk-c152qqqg.js:44:43027)', 'DeprecationWarning: next one', false, false],
    ['YOLO mode is enabled. All tool calls will be automatically approved.', 'YOLO mode is enabled. All tool calls will be automatically approved.', false, false],
    ['Error: x:', '    indented after a blank line is a new one', true, false],
    ['Reading additional input from stdin...', 'WARNING: proceeding', false, false],
    ['    at process.processTicksAndRejections (node:internal/process/task_queues:90:21)', "Emitted 'error' event on ChildProcess instance at:", false, true],
  ])('%j then %j (after a blank line: %s) -> %s', (previous, next, afterBlank, expected) => {
    expect(continues(previous, next, afterBlank)).toBe(expected);
  });
});

describe('groupStderrLines on recorded stderr', () => {
  it('Cline 3.0.65: 19 AI SDK deprecation traces (76 lines, one warning each before) are 19 diagnostics of 4 lines', () => {
    const lines = recorded('cline', 'cline-3.0.65-tools.stderr');
    const groups = diagnostics(groupStderrLines(lines));
    expect(lines.filter((l) => l.trim().length > 0)).toHaveLength(76);
    expect(groups).toHaveLength(19);
    expect(groups[0]).toEqual([
      'Warning: AI SDK Warning System: To turn off warning logging, set the AI_SDK_LOG_WARNINGS global to false.',
      '      at iX (/$bunfs/root/chunk-c152qqqg.js:26:46952)',
      '      at J0 (/$bunfs/root/chunk-c152qqqg.js:26:47138)',
      '      at transform (/$bunfs/root/chunk-c152qqqg.js:44:43027)',
    ]);
    expect(groups.slice(1).every((g) => g.length === 4 && g[0]!.startsWith('DeprecationWarning: AI SDK Warning'))).toBe(true);
  });

  it("Gemini 0.61.0: one-line notices stay one each; the API error with its stack and error object is one (20 warnings before: 8); Node's deprecation and its hint are one", () => {
    const lines = recorded('gemini', 'gemini-0.61.0-api-error.stderr');
    const apiError = diagnostics(groupStderrLines(lines));
    expect(apiError.map((g) => g.length)).toEqual([1, 1, 1, 1, 1, 1, 1, 13]);
    expect(apiError.at(-1)).toEqual(lines.slice(7));
    expect(apiError.at(-1)![0]).toMatch(/^Error when talking to Gemini API/);
    expect(apiError.at(-1)!.slice(-2)).toEqual(['  status: 400', '}']);
    const tools = diagnostics(groupStderrLines(recorded('gemini', 'gemini-0.61.0-tools.stderr')));
    expect(tools.map((g) => g.length)).toEqual([1, 1, 1, 1, 1, 2]);
    expect(tools.at(-1)![1]).toBe('(Use `node --trace-deprecation ...` to show where the warning was created)');
  });

  it("Node's uncaught exception (gg's shell spawn failing as the run user, 18 warnings before) is one diagnostic", () => {
    const lines = [
      'node:events:505',
      "    throw er; // Unhandled 'error' event",
      '    ^',
      '',
      'Error: spawn /bin/sh EACCES',
      '    at ChildProcess._handle.onexit (node:internal/child_process:316:19)',
      '    at onErrorNT (node:internal/child_process:554:16)',
      '    at process.processTicksAndRejections (node:internal/process/task_queues:90:21)',
      "Emitted 'error' event on ChildProcess instance at:",
      '    at ChildProcess._handle.onexit (node:internal/child_process:322:12)',
      '    at onErrorNT (node:internal/child_process:554:16)',
      '    at process.processTicksAndRejections (node:internal/process/task_queues:90:21) {',
      '  errno: -13,',
      "  code: 'EACCES',",
      "  syscall: 'spawn /bin/sh',",
      "  path: '/bin/sh',",
      '  spawnargs: [ \'-c\', "printf \'hello\\\\n\' > hello.txt && cat hello.txt" ]',
      '}',
      '',
      'Node.js v24.22.3',
    ];
    expect(groupStderrLines(lines)).toEqual([lines]);
  });

  it('blank lines between diagnostics are groups of their own; a diagnostic never starts or ends with one', () => {
    expect(groupStderrLines(['', 'a', '    at x', '', '', 'b', ''])).toEqual([[''], ['a', '    at x'], ['', ''], ['b'], ['']]);
  });

  it('a group is closed past its size bound, so an endless indented stream stays bounded', () => {
    const line = `    ${'x'.repeat(1000)}`;
    const groups = groupStderrLines(['head', ...Array.from({ length: 200 }, () => line)]);
    expect(groups.length).toBeGreaterThan(1);
    expect(Math.max(...groups.map((g) => g.join('\n').length))).toBeLessThan(MAX_GROUP_CHARS + 1100);
  });
});

describe('StderrGrouper', () => {
  it('holds a diagnostic until a line that does not continue it, or a flush; pending says so', () => {
    const grouper = new StderrGrouper();
    expect(grouper.pending()).toBe(false);
    expect(grouper.push('Error: boom')).toEqual([]);
    expect(grouper.push('    at f (x.js:1:1)')).toEqual([]);
    expect(grouper.pending()).toBe(true);
    expect(grouper.push('next')).toEqual([['Error: boom', '    at f (x.js:1:1)']]);
    expect(grouper.flush()).toEqual([['next']]);
    expect(grouper.pending()).toBe(false);
    expect(grouper.flush()).toEqual([]);
  });

  it('property: the groups, concatenated, are the input lines exactly; no group is empty or mixes a leading blank', () => {
    const piece = fc.oneof(
      fc.string({ maxLength: 20 }),
      fc.constantFrom('', ' ', '    at f (x.js:1:2)', 'at g', '}', ']', '    ^', 'Error: boom', 'Node.js v24.0.0', 'Warning: more follows:', '(Use `node --trace-warnings ...`', '\t-> detail'),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 60 }), fc.array(fc.nat({ max: 60 }), { maxLength: 5 }), (lines, flushes) => {
        // Flushes at arbitrary points (quiet gaps) change the grouping, never the bytes.
        const grouper = new StderrGrouper();
        const groups: string[][] = [];
        lines.forEach((line, i) => {
          if (flushes.includes(i)) groups.push(...grouper.flush());
          groups.push(...grouper.push(line));
        });
        groups.push(...grouper.flush());
        expect(groups.flat()).toEqual(lines);
        for (const group of groups) {
          expect(group.length).toBeGreaterThan(0);
          const blank = group[0]!.trim().length === 0;
          // A group of blank lines is only blank lines; a diagnostic ends with a non-blank line.
          if (blank) expect(group.every((l) => l.trim().length === 0)).toBe(true);
          else expect(group.at(-1)!.trim().length).toBeGreaterThan(0);
        }
        expect(groupStderrLines(lines).flat()).toEqual(lines);
      }),
      { numRuns: 500, seed: 21 },
    );
  });
});
