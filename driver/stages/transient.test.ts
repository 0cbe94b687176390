import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { isTransientInstallFailure } from './transient.ts';

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
