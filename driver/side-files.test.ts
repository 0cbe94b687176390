// Side files (side-files.ts): tailed while the session runs, read from the run HOME only, never through a link the
// agent planted, never a FIFO that would block the driver.
import { appendFileSync, mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SideFile } from '../shared/adapter.ts';
import { MAX_REPORT_BYTES } from './home-files.ts';
import { findSideFiles, MAX_MATCHES, SideFileReader } from './side-files.ts';
import type { Timers } from './stages/stderr-flush.ts';

let root: string;
let home: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'tcab-side-'));
  home = join(root, 'home');
  mkdirSync(home);
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** Timers that never fire: the test drives each poll itself. */
const manualTimers: Timers = { setTimeout: () => 1, clearTimeout: () => undefined };

function reader(files: SideFile[]) {
  const lines: [string, string][] = [];
  const warnings: string[] = [];
  const side = new SideFileReader(home, files, { line: (name, line) => lines.push([name, line.text]), warning: (m) => warnings.push(m) }, manualTimers);
  return { side, lines, warnings };
}

const UPDATES: SideFile = { name: 'updates', path: '.grok/sessions/*/*/updates.jsonl', read: 'lines' };

describe('SideFileReader: lines', () => {
  it('hands over each complete line as it is written, a session directory made after the start included', async () => {
    const { side, lines } = reader([UPDATES]);
    await side.start();
    const dir = join(home, '.grok/sessions/%2Fwork/s-1');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'updates.jsonl'), '{"a":1}\n{"b":');
    await side.poll();
    expect(lines).toEqual([['updates', '{"a":1}']]);
    appendFileSync(join(dir, 'updates.jsonl'), '2}\n{"c":3}');
    await side.poll();
    expect(lines).toEqual([['updates', '{"a":1}'], ['updates', '{"b":2}']]);
    // The last line without a newline still counts once the CLI exited.
    expect(await side.stop()).toEqual({});
    expect(lines.map(([, text]) => text)).toEqual(['{"a":1}', '{"b":2}', '{"c":3}']);
  });

  it('reads a file an earlier session left only from where it ended', async () => {
    const dir = join(home, '.grok/sessions/w/s-1');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'updates.jsonl'), '{"old":1}\n');
    const { side, lines } = reader([UPDATES]);
    await side.start();
    appendFileSync(join(dir, 'updates.jsonl'), '{"new":1}\n');
    await side.stop();
    expect(lines).toEqual([['updates', '{"new":1}']]);
  });

  it('reads a file the CLI replaced (a new inode) from its start', async () => {
    const dir = join(home, '.grok/sessions/w/s-1');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'updates.jsonl'), '{"n":1}\n');
    const { side, lines } = reader([UPDATES]);
    await side.start();
    writeFileSync(join(dir, 'next'), '{"n":2}\n');
    renameSync(join(dir, 'next'), join(dir, 'updates.jsonl'));
    await side.stop();
    expect(lines).toEqual([['updates', '{"n":2}']]);
  });

  it('never follows a symlink planted at a directory level or as the file, and never opens a FIFO', async () => {
    const outside = join(root, 'secrets/x/y');
    mkdirSync(outside, { recursive: true });
    writeFileSync(join(outside, 'updates.jsonl'), '{"key":"sk-fake-driver-secret"}\n');
    mkdirSync(join(home, '.grok/sessions/w'), { recursive: true });
    symlinkSync(join(root, 'secrets/x/y'), join(home, '.grok/sessions/w/linked-dir'));
    symlinkSync(join(root, 'secrets/x'), join(home, '.grok/sessions/linked-level'));
    mkdirSync(join(home, '.grok/sessions/w/s-2'));
    symlinkSync(join(outside, 'updates.jsonl'), join(home, '.grok/sessions/w/s-2/updates.jsonl'));
    mkdirSync(join(home, '.grok/sessions/w/s-3'));
    execFileSync('mkfifo', [join(home, '.grok/sessions/w/s-3/updates.jsonl')]);
    const { side, lines } = reader([UPDATES]);
    await side.start();
    await side.poll();
    await side.stop();
    expect(lines).toEqual([]);
    // Even the first path segment: HOME's .grok itself a link to elsewhere.
    rmSync(join(home, '.grok'), { recursive: true });
    symlinkSync(join(root, 'secrets'), join(home, '.grok'));
    expect(await findSideFiles(home, '.grok/*/*/updates.jsonl')).toEqual([]);
  });

  it('stops at MAX_MATCHES files however many session directories the agent makes', async () => {
    for (let i = 0; i < MAX_MATCHES + 10; i++) {
      mkdirSync(join(home, `.grok/sessions/w/s-${String(i).padStart(3, '0')}`), { recursive: true });
      writeFileSync(join(home, `.grok/sessions/w/s-${String(i).padStart(3, '0')}/updates.jsonl`), '{}\n');
    }
    expect((await findSideFiles(home, UPDATES.path)).length).toBe(MAX_MATCHES);
  });

  it('refuses a pattern that leaves HOME', () => {
    expect(() => reader([{ name: 'x', path: '../etc/passwd', read: 'lines' }])).toThrow(/not a path inside/);
    expect(() => reader([{ name: 'x', path: '/etc/passwd', read: 'document' }])).toThrow(/not a path inside/);
  });

  it('delivers exactly the lines written, however the writes are cut (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.stringMatching(/^[a-z0-9{}":,]{1,20}$/), { maxLength: 12 }), fc.array(fc.nat(40), { maxLength: 6 }), async (records, cuts) => {
        rmSync(join(home, '.grok'), { recursive: true, force: true });
        const dir = join(home, '.grok/sessions/w/s');
        mkdirSync(dir, { recursive: true });
        const text = records.map((r) => `${r}\n`).join('');
        writeFileSync(join(dir, 'updates.jsonl'), '');
        const { side, lines } = reader([UPDATES]);
        await side.start();
        let at = 0;
        for (const cut of [...cuts].sort((a, b) => a - b)) {
          const to = Math.min(text.length, cut);
          if (to > at) appendFileSync(join(dir, 'updates.jsonl'), text.slice(at, to));
          at = Math.max(at, to);
          await side.poll();
        }
        appendFileSync(join(dir, 'updates.jsonl'), text.slice(at));
        await side.stop();
        expect(lines.map(([, t]) => t)).toEqual(records);
      }),
      { numRuns: 40 },
    );
  });
});

describe('SideFileReader: documents', () => {
  const STATE: SideFile = { name: 'state', path: '.openhands/conversations/*/base_state.json', read: 'document' };

  it('reads the newest match that changed during the session; one left unchanged is not it', async () => {
    mkdirSync(join(home, '.openhands/conversations/old'), { recursive: true });
    writeFileSync(join(home, '.openhands/conversations/old/base_state.json'), '{"old":true}');
    utimesSync(join(home, '.openhands/conversations/old/base_state.json'), new Date(), new Date(Date.now() + 60_000));
    const { side } = reader([STATE]);
    await side.start();
    for (const [id, seconds] of [['a', 1], ['b', 2]] as const) {
      mkdirSync(join(home, `.openhands/conversations/${id}`));
      writeFileSync(join(home, `.openhands/conversations/${id}/base_state.json`), `{"id":"${id}"}`);
      utimesSync(join(home, `.openhands/conversations/${id}/base_state.json`), new Date(), new Date(Date.now() + seconds * 1000));
    }
    expect(await side.stop()).toEqual({ state: '{"id":"b"}' });
  });

  it('leaves out a document larger than the report cap, saying so', async () => {
    const { side, warnings } = reader([STATE]);
    await side.start();
    mkdirSync(join(home, '.openhands/conversations/a'), { recursive: true });
    writeFileSync(join(home, '.openhands/conversations/a/base_state.json'), Buffer.alloc(MAX_REPORT_BYTES + 1, 0x20));
    expect(await side.stop()).toEqual({});
    expect(warnings).toEqual([expect.stringMatching(/base_state\.json is larger than/)]);
  });

  it('has nothing when the CLI wrote nothing', async () => {
    const { side } = reader([STATE]);
    await side.start();
    expect(await side.stop()).toEqual({});
  });
});
