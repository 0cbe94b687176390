import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, openSync, rmSync, symlinkSync, writeFileSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { droppedOptionalInNpmLog, isTransientInstallFailure, unfetchedInNpmLog } from './transient.ts';
import { MAX_LOG_BYTES, MAX_LOG_FILES, readNpmLogs } from './install.ts';

describe('isTransientInstallFailure (an install worth another attempt)', () => {
  it.each([
    ['the registry answers 503', 'npm error code E503\nnpm error 503 Service Unavailable - GET http://127.0.0.1:4873/gg', true],
    ['an older npm (npm ERR!)', 'npm ERR! code E502\nnpm ERR! 502 Bad Gateway', true],
    ['rate limited', 'npm error code E429', true],
    ['connection reset', 'npm error code ECONNRESET\nnpm error network aborted', true],
    ['DNS down', 'npm error code EAI_AGAIN\nnpm error request to https://registry.npmjs.org/x failed, reason: getaddrinfo EAI_AGAIN', true],
    ['timeout', 'npm error code ETIMEDOUT', true],
    ['npm\'s own words', 'npm error network request to http://127.0.0.1:1/gg failed, reason: connect ECONNREFUSED', true],
    ['no such package', 'npm error code E404\nnpm error 404 Not Found - GET http://127.0.0.1:4873/nothing', false],
    ['no such version', 'npm error code ETARGET\nnpm error notarget No matching version found for gg@99.0.0', false],
    ['a permission', 'npm error code EACCES', false],
    ['a full disk', 'npm error code ENOSPC', false],
    ['a 500-something that is not a server error code', 'npm error code E5000', false],
    ['the harness printing the words, not npm', 'ECONNRESET in my test output', false],
    ['nothing', '', false],
  ])('%s', (_, output, transient) => {
    expect(isTransientInstallFailure(output)).toBe(transient);
  });

  it('never throws, and only an npm error line makes a failure transient (property)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 2000 }), (text) => {
        const verdict = isTransientInstallFailure(text);
        if (!/npm (error|ERR!)/.test(text)) expect(verdict).toBe(false);
      }),
    );
  });
});

// Lines as npm 11 wrote them into its debug log (measured: an optional dependency's packument answering 503, or its
// connection reset, and the install ending "added 1 package", exit 0).
const REG = 'http://127.0.0.1:38993';
const OK_LINES = [`13 http fetch GET 200 ${REG}/foo 102ms (cache miss)`, `37 http fetch GET 200 ${REG}/foo/-/foo-1.0.0.tgz 35ms (cache miss)`];
const GAVE_UP_503 = [`23 http fetch GET ${REG}/foo-native attempt 1 failed with 503`, `25 http fetch GET ${REG}/foo-native attempt 3 failed with 503`, `26 http fetch GET 503 ${REG}/foo-native 70132ms attempt #3 (cache skip)`];
const GAVE_UP_RESET = [`23 http fetch GET ${REG}/foo-native attempt 1 failed with ECONNRESET`, `25 http fetch GET ${REG}/foo-native attempt 3 failed with ECONNRESET`];

describe('unfetchedInNpmLog (what an install that exited 0 could not fetch)', () => {
  it.each([
    ['everything fetched', [...OK_LINES, '43 verbose exit 0'], []],
    ['an optional packument answered 503 after npm\'s retries', [...OK_LINES, ...GAVE_UP_503], [{ url: `${REG}/foo-native`, error: '503' }]],
    ['its connection reset on every attempt (no final line)', [...OK_LINES, ...GAVE_UP_RESET], [{ url: `${REG}/foo-native`, error: 'ECONNRESET' }]],
    ['a failed attempt, then fetched', [`23 http fetch GET ${REG}/foo-native attempt 1 failed with ECONNREFUSED`, `24 http fetch GET 200 ${REG}/foo-native 12ms (cache miss)`], []],
    ['gave up, then fetched on a second request', [...GAVE_UP_503, `30 http fetch GET 304 ${REG}/foo-native 5ms (cache revalidated)`], []],
    ['rate limited', [`26 http fetch GET 429 ${REG}/foo-native 3ms attempt #3`], [{ url: `${REG}/foo-native`, error: '429' }]],
    ['a 404 (an optional package that does not exist: not the registry failing)', [`26 http fetch GET 404 ${REG}/foo-native 3ms (cache skip)`], []],
    ['501 Not Implemented is not a transient answer', [`26 http fetch GET 501 ${REG}/foo-native 3ms`], []],
    ['two URLs, each its last word', [...GAVE_UP_RESET, `40 http fetch GET 502 ${REG}/bar 9ms`, `41 http fetch GET 200 ${REG}/baz 9ms`], [{ url: `${REG}/foo-native`, error: 'ECONNRESET' }, { url: `${REG}/bar`, error: '502' }]],
    ['no log at all', [], []],
  ])('%s', (_, lines, unfetched) => {
    expect(unfetchedInNpmLog(lines.join('\n'))).toEqual(unfetched);
  });

  it('never throws; a URL whose last fetch line is a success is never reported (property)', () => {
    const url = fc.webUrl();
    const line = fc.oneof(
      fc.tuple(url, fc.constantFrom('503', 'ECONNRESET', 'ETIMEDOUT')).map(([u, code]) => ({ u, ok: false, text: `http fetch GET ${u} attempt 1 failed with ${code}` })),
      fc.tuple(url, fc.constantFrom(200, 304, 500, 503, 429)).map(([u, status]) => ({ u, ok: status < 500 && status !== 429, text: `http fetch GET ${status} ${u} 3ms` })),
      fc.string({ maxLength: 200 }).map((text) => ({ u: undefined, ok: true, text })),
    );
    fc.assert(
      fc.property(fc.array(line, { maxLength: 40 }), (lines) => {
        const reported = unfetchedInNpmLog(lines.map((l, i) => `${i} ${l.text}`).join('\n'));
        for (const { url: u } of reported) {
          const last = lines.findLast((l) => l.u === u);
          if (last) expect(last.ok).toBe(false);
        }
        expect(new Set(reported.map((r) => r.url)).size).toBe(reported.length);
      }),
    );
  });
});

// Lines as npm 11.19 wrote them (measured against a registry on 127.0.0.1): wrap@1.0.0 with optional dependencies
// plat-linux (os linux) and plat-darwin (os darwin); the install ends "added 1 package", exit 0, in each case.
const PREFIX = '/tmp/npmexp/pfx/lib/node_modules/wrap/node_modules';
const CUT_MID_BODY = [
  '30 silly placeDep node_modules/wrap plat-linux@1.0.0 OK for: wrap@1.0.0 want: 1.0.0',
  '35 silly tarball no local data for plat-linux@http://127.0.0.1:4999/plat-linux/-/plat-linux-1.0.0.tgz. Extracting by manifest.',
  `37 verbose reify failed optional dependency ${PREFIX}/plat-linux`,
  `38 silly reify mark deleted [ '${PREFIX}/plat-linux' ]`,
];
const SCRIPT_FAILED = [
  '37 http fetch GET 200 http://127.0.0.1:4999/plat-linux/-/plat-linux-1.0.0.tgz 153ms (cache miss)',
  '38 info run plat-linux@1.0.0 postinstall node_modules/wrap/node_modules/plat-linux echo boom; exit 3',
  '39 info run plat-linux@1.0.0 postinstall { code: 3, signal: null }',
  `40 verbose reify failed optional dependency ${PREFIX}/plat-linux`,
];

describe('droppedOptionalInNpmLog (an optional dependency npm dropped after its download or unpacking failed)', () => {
  it.each([
    ['its tarball cut off mid-body: dropped', CUT_MID_BODY, [`${PREFIX}/plat-linux`]],
    ['its own postinstall failed: not a download, not counted', SCRIPT_FAILED, []],
    // Measured shape (Gemini CLI as an unprivileged user): node-pty's build fails and its optional set goes with it.
    ['a script failed: its whole optional set is dropped, none of it counted', ['100 info run node-pty@1.0.0 install node_modules/@google/gemini-cli/node_modules/node-pty node-gyp rebuild', '101 info run node-pty@1.0.0 install { code: 1, signal: null }', `102 verbose reify failed optional dependency ${PREFIX}/node-pty`, `103 verbose reify failed optional dependency ${PREFIX}/nan`], []],
    ['a script that ended 0 does not hide a dropped download', ['38 info run plat-linux@1.0.0 postinstall node_modules/wrap/node_modules/plat-linux true', '39 info run plat-linux@1.0.0 postinstall { code: 0, signal: null }', ...CUT_MID_BODY], [`${PREFIX}/plat-linux`]],
    ['a script killed by a signal counts as failed', ['38 info run plat-linux@1.0.0 install node_modules/wrap/node_modules/plat-linux sleep 9', '39 info run plat-linux@1.0.0 install { code: null, signal: SIGKILL }', ...CUT_MID_BODY.slice(2)], []],
    ['an end line with no start line names no path', ['39 info run plat-linux@1.0.0 postinstall { code: 3, signal: null }', ...CUT_MID_BODY], [`${PREFIX}/plat-linux`]],
    ['a dependency for another platform (skipped without the line) and a whole install', ['29 silly placeDep node_modules/wrap plat-darwin@1.0.0 OK for: wrap@1.0.0 want: 1.0.0', '39 silly ADD node_modules/wrap/node_modules/plat-linux', '48 verbose exit 0'], []],
    ['the same path written twice is one', [...CUT_MID_BODY, ...CUT_MID_BODY], [`${PREFIX}/plat-linux`]],
    ['no log at all', [], []],
  ])('%s', (_, lines, dropped) => {
    expect(droppedOptionalInNpmLog(lines.join('\n'))).toEqual(dropped);
  });

  it('never throws; reports each path once, only paths a line named, none once a script failed (property)', () => {
    const path = fc.stringMatching(/^[a-z][a-z0-9-]{0,12}$/);
    const line = fc.oneof(
      path.map((p) => ({ dropped: p, text: `verbose reify failed optional dependency ${PREFIX}/${p}` })),
      fc.tuple(path, fc.constantFrom('0', '1', '3')).map(([p, code]) => ({ script: code === '0' ? undefined : p, text: `info run ${p}@1.0.0 postinstall node_modules/wrap/node_modules/${p} ./build.sh\n0 info run ${p}@1.0.0 postinstall { code: ${code}, signal: null }` })),
      fc.string({ maxLength: 200 }).map((text) => ({ text })),
    );
    fc.assert(
      fc.property(fc.array(line, { maxLength: 30 }), (lines) => {
        const reported = droppedOptionalInNpmLog(lines.map((l, i) => `${i} ${l.text}`).join('\n'));
        expect(new Set(reported).size).toBe(reported.length);
        for (const p of reported) expect(lines.some((l) => 'dropped' in l && `${PREFIX}/${l.dropped}` === p)).toBe(true);
        // A failed script anywhere: nothing is taken for a download cut.
        if (lines.some((l) => 'script' in l && l.script !== undefined)) expect(reported).toEqual([]);
      }),
    );
  });
});

// The install stage reads npm's logs (readNpmLogs) after an exit 0 from `<tmp>/npm-install-logs`, a directory the run
// user (who ran the install, and may still run something) can fill with anything.
describe('readNpmLogs (npm\'s logs, from a directory the run user controls)', () => {
  let tmp: string;
  let logs: string;
  let outside: string;
  beforeEach(() => {
    tmp = mkdtempSync(join(tmpdir(), 'tcab-npm-logs-'));
    logs = join(tmp, 'npm-install-logs');
    mkdirSync(logs);
    outside = mkdtempSync(join(tmpdir(), 'tcab-npm-logs-outside-'));
  });
  afterEach(() => {
    rmSync(tmp, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });
  /** npm's name for a log written at second `s` of a minute. */
  const logName = (s: number) => `2026-01-02T10_11_${String(s).padStart(2, '0')}_000Z-debug-0.log`;
  const urls = async () => unfetchedInNpmLog(await readNpmLogs(tmp)).map((u) => u.url);

  it('reads npm\'s log: what it gave up on is found', async () => {
    writeFileSync(join(logs, logName(1)), [...OK_LINES, ...GAVE_UP_503].join('\n'));
    expect(await urls()).toEqual([`${REG}/foo-native`]);
  });

  it('no logs directory: nothing', async () => {
    rmSync(logs, { recursive: true });
    expect(await readNpmLogs(tmp)).toBe('');
  });

  it('a log that is a symlink to a file outside is not followed (its "gave up" line is never seen)', async () => {
    writeFileSync(join(outside, 'planted.log'), GAVE_UP_503.join('\n'));
    symlinkSync(join(outside, 'planted.log'), join(logs, logName(2)));
    writeFileSync(join(logs, logName(1)), OK_LINES.join('\n'));
    const text = await readNpmLogs(tmp);
    expect(text).toContain(OK_LINES[0]);
    expect(text).not.toContain('foo-native');
    expect(await urls()).toEqual([]);
  });

  it('a logs directory that is a symlink to a directory outside is not followed', async () => {
    rmSync(logs, { recursive: true });
    writeFileSync(join(outside, logName(1)), GAVE_UP_503.join('\n'));
    symlinkSync(outside, logs);
    expect(await readNpmLogs(tmp)).toBe('');
  });

  it('a FIFO, a directory or a symlink to a FIFO named as the newest logs are skipped without blocking, and the real log is still read', { timeout: 10_000 }, async () => {
    writeFileSync(join(logs, logName(1)), GAVE_UP_RESET.join('\n'));
    execFileSync('mkfifo', [join(logs, logName(5))]); // no writer ever opens it: a blocking open or read would hang
    mkdirSync(join(logs, logName(4)));
    execFileSync('mkfifo', [join(outside, 'fifo')]);
    symlinkSync(join(outside, 'fifo'), join(logs, logName(3)));
    expect(await urls()).toEqual([`${REG}/foo-native`]);
  });

  it('a huge log is read only up to the cap: a line beyond it, or cut by it, is not seen', async () => {
    const file = openSync(join(logs, logName(1)), 'w');
    try {
      const at = (position: number, line: string) => writeSync(file, Buffer.from(`${line}\n`), 0, Buffer.byteLength(line) + 1, position);
      at(0, OK_LINES[0]!);
      const before = `24 http fetch GET ${REG}/before-cap attempt 1 failed with ECONNRESET`;
      at(MAX_LOG_BYTES - 4096, before); // read: inside the cap
      const cut = `25 http fetch GET ${REG}/cut-at-cap attempt 1 failed with 503`;
      at(MAX_LOG_BYTES - cut.length + 2, cut); // the cap falls inside "503": read, it would say "failed with 5"
      at(MAX_LOG_BYTES + 1024, `26 http fetch GET ${REG}/beyond-cap attempt 1 failed with 503`);
    } finally {
      closeSync(file);
    }
    const text = await readNpmLogs(tmp);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(MAX_LOG_BYTES);
    expect(text).not.toContain('cut-at-cap');
    expect(unfetchedInNpmLog(text)).toEqual([{ url: `${REG}/before-cap`, error: 'ECONNRESET' }]);
  });

  it(`of 100 logs only the newest ${MAX_LOG_FILES} by name are read, oldest first (a later success still wins)`, async () => {
    expect(MAX_LOG_FILES).toBe(16);
    for (let i = 0; i < 100; i++) writeFileSync(join(logs, logName(i)), `${i} verbose ordinary log\n`);
    const gaveUp = (path: string) => `23 http fetch GET ${REG}/${path} attempt 3 failed with ECONNRESET\n`;
    writeFileSync(join(logs, logName(0)), gaveUp('in-the-oldest'));
    writeFileSync(join(logs, logName(83)), gaveUp('just-too-old')); // the 17th newest
    writeFileSync(join(logs, logName(84)), gaveUp('oldest-read')); // the 16th newest
    writeFileSync(join(logs, logName(90)), gaveUp('fetched-later'));
    writeFileSync(join(logs, logName(91)), `30 http fetch GET 200 ${REG}/fetched-later 5ms\n`);
    writeFileSync(join(logs, logName(99)), gaveUp('in-the-newest'));
    writeFileSync(join(logs, 'zzz-not-a-log.txt'), gaveUp('not-a-log')); // not a .log name: not read, not counted
    const text = await readNpmLogs(tmp);
    expect(text.match(/verbose ordinary log/g)).toHaveLength(MAX_LOG_FILES - 4);
    expect(await urls()).toEqual([`${REG}/oldest-read`, `${REG}/in-the-newest`]);
  });
});
