import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { isTransientInstallFailure, unfetchedInNpmLog } from './transient.ts';

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
