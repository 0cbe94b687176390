// The RunSpec schema: what the driver will pass to a process is checked before anything runs.
import { describe, expect, it } from 'vitest';
import { RunSpec } from './run.ts';
import { formatIssues } from './zod-issues.ts';

const valid = { harness: 'claude', model: 'claude-sonnet-4-5', prompt: 'Fix the failing test' };
const NUL = 'must not contain a NUL character (\\0): it cannot be passed to a process';
const problems = (spec: unknown) => {
  const parsed = RunSpec.safeParse(spec);
  return parsed.success ? 'valid' : formatIssues(parsed.error);
};

describe('RunSpec', () => {
  it('finding 11: a NUL in any field that becomes argv, env or a path is invalid, naming the field', () => {
    expect(problems({ ...valid, prompt: 'fix\0it' })).toBe(`prompt: ${NUL}`);
    expect(problems({ ...valid, model: 'claude\0' })).toBe(`model: ${NUL}`);
    expect(problems({ ...valid, continuePrompt: '\0' })).toBe(`continuePrompt: ${NUL}`);
    expect(problems({ ...valid, testCase: { init: 'make\0test' } })).toBe(`testCase.init: ${NUL}`);
    for (const source of [{ local: { path: '/tmp/x\0' } }, { git: { url: 'https://example.invalid/r\0' } }, { git: { url: 'u', ref: 'main\0' } }, { files: [{ path: 'a\0b', content: 'x' }] }]) {
      expect(problems({ ...valid, testCase: { source } })).not.toBe('valid');
    }
  });

  it('a NUL in file contents is data, not an argument: still valid', () => {
    expect(problems({ ...valid, testCase: { source: { files: [{ path: 'bin.dat', content: '\0\0' }] } } })).toBe('valid');
  });
});
