// The gate holds requests until released, counts only callers still waiting, and holds later requests again.
import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startGate } from './gate.ts';
import type { Gate } from './gate.ts';

let gate: Gate | undefined;
afterEach(async () => gate?.close());

const get = (url: string) => {
  const req = request(url);
  const body = new Promise<string>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (c: string) => (text += c)).on('end', () => resolve(text));
    });
    req.on('error', reject);
  });
  req.end();
  return { req, body };
};

describe('gate', () => {
  it('holds requests until released; a caller that left is not counted; later requests wait again', async () => {
    gate = await startGate();
    const a = get(gate.url);
    const b = get(gate.url);
    await gate.untilWaiting(2);
    b.req.destroy();
    b.body.catch(() => undefined);
    await gate.until((waiting) => waiting === 1);
    expect(gate.release()).toBe(1);
    expect(await a.body).toBe('open\n');
    expect(gate.waiting).toBe(0);
    const c = get(gate.url);
    await gate.untilWaiting(1);
    expect(gate.release()).toBe(1);
    expect(await c.body).toBe('open\n');
  });
});
