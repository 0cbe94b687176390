import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, logLevelFrom } from './log.ts';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { lines, destination };
}

describe('createLogger', () => {
  it('writes one JSON object per line with component, bindings, level name and ISO time', () => {
    const { lines, destination } = capture();
    const log = createLogger({ component: 'tcab-driver', bindings: { runId: 'r-1', harness: 'claude' }, destination });
    log.warn({ url: 'nats://127.0.0.1:4222' }, 'NATS unreachable');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ component: 'tcab-driver', runId: 'r-1', harness: 'claude', level: 'warn', msg: 'NATS unreachable', url: 'nats://127.0.0.1:4222' });
    expect(new Date(lines[0]!.time as string).toISOString()).toBe(lines[0]!.time);
  });

  it('drops lines below the level', () => {
    const { lines, destination } = capture();
    const log = createLogger({ component: 'c', level: 'warn', destination });
    log.info('quiet');
    log.error('loud');
    expect(lines.map((l) => l.msg)).toEqual(['loud']);
  });
});

describe('logLevelFrom', () => {
  it.each([
    [undefined, 'info'],
    ['', 'info'],
    ['debug', 'debug'],
    ['silent', 'silent'],
  ])('TCAB_LOG_LEVEL=%s -> %s', (raw, level) => {
    expect(logLevelFrom({ TCAB_LOG_LEVEL: raw })).toBe(level);
  });

  it('names the variable and the allowed values for anything else', () => {
    expect(() => logLevelFrom({ TCAB_LOG_LEVEL: 'verbose' })).toThrow(/TCAB_LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent, got "verbose"/);
  });
});
