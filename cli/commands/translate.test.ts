import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const exec = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');
const FIXTURE = join(ROOT, 'harnesses/claude/fixtures/claude-2.1.197-stream-json.jsonl');
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tcab-translate-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const tcab = (args: string[]) => exec(process.execPath, [join(ROOT, 'cli/main.ts'), ...args], { maxBuffer: 64 << 20, env: { ...process.env, NO_COLOR: '1' } });

describe('tcab translate', () => {
  it('prints NDJSON events when piped and the result as one JSON object on stderr', async () => {
    const { stdout, stderr } = await tcab(['translate', '--harness', 'claude', FIXTURE]);
    const events = stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string });
    expect(events.map((e) => e.type)).toEqual(['reasoning', 'agent', 'command', 'write', 'read', 'write', 'skill', 'orchestration', 'orchestration', 'command', 'agent']);
    const result = JSON.parse(stderr);
    expect(result).toMatchObject({ harness: 'claude', exit: { code: 0 }, result: { session_id: '514779f8-fea9-42fd-b874-f62a7401978f', reported_cost_usd: 0.0761625 } });
    expect(result.cost).toMatchObject({ canonical_model: 'anthropic/claude-opus-4.8', actual_cost_usd: 0.0761625, comparable_cost_usd: (10800 * 5 + 720 * 25 + 2700 * 0.5 + 450 * 6.25) / 1e6 });
  });

  it('--pretty shows one line per event, reasoning collapsed, then the result with usage and both costs', async () => {
    const { stdout } = await tcab(['translate', '--harness', 'claude', '--pretty', FIXTURE]);
    expect(stdout).toMatch(/command\s+✗ exit 3 \(exit 3\)/);
    expect(stdout).toContain('usage           input 10800 · output 720 · cache read 2700 · cache write 450 · reasoning –');
    expect(stdout).toContain('actual cost     $0.076162');
    expect(stdout).toContain(`comparable cost $${((10800 * 5 + 720 * 25 + 2700 * 0.5 + 450 * 6.25) / 1e6).toFixed(6)}`);
  });

  it('writes the result to --result and keeps stdout pure NDJSON with --json', async () => {
    const resultFile = join(dir, 'result.json');
    const { stdout, stderr } = await tcab(['translate', '--harness', 'claude', '--json', '--result', resultFile, FIXTURE]);
    expect(stderr).toBe('');
    expect(stdout.trim().split('\n').every((l) => 'type' in JSON.parse(l))).toBe(true);
    expect(JSON.parse(readFileSync(resultFile, 'utf8')).result.session_id).toBe('514779f8-fea9-42fd-b874-f62a7401978f');
  });

  it('turns garbage (binary, truncated JSON, a 16 MiB line) into unknown events and exits 0', async () => {
    const garbage = join(dir, 'garbage.jsonl');
    writeFileSync(garbage, Buffer.concat([Buffer.from([0, 1, 2, 0xff, 0xfe, 10]), Buffer.from('{"type":"assistant","mess\n'), Buffer.alloc(16 * 1024 * 1024, 0x7b), Buffer.from('\n')]));
    const { stdout } = await tcab(['translate', '--harness', 'claude', '--json', '--result', join(dir, 'r.json'), garbage]);
    const events = stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; original_bytes?: number });
    expect(events.map((e) => e.type)).toEqual(['unknown', 'unknown', 'unknown']);
    expect(events[2]!.original_bytes).toBe(16 * 1024 * 1024);
  });

  it('finding 3: a JSON line nested 100,000 deep after a real Claude transcript: every good event is printed, then one unknown with the line, exit 0', async () => {
    const tools = join(ROOT, 'harnesses/claude/fixtures/claude-2.1.332-tools.jsonl');
    const deepLine = '['.repeat(100_000) + ']'.repeat(100_000);
    const hostile = join(dir, 'deep.jsonl');
    writeFileSync(hostile, `${readFileSync(tools, 'utf8').replace(/\n?$/, '\n')}${deepLine}\n`);
    const events = async (file: string) => {
      const { stdout } = await tcab(['translate', '--harness', 'claude', '--json', '--result', join(dir, 'deep-result.json'), file]);
      return stdout.trim().split('\n').map((l) => {
        const { timestamp: _t, ...event } = JSON.parse(l) as { timestamp: string; type: string; raw?: unknown };
        return event;
      });
    };
    const good = await events(tools);
    expect(good.length).toBeGreaterThan(5);
    expect(await events(hostile)).toEqual([...good, { type: 'unknown', session_id: expect.any(String), raw: deepLine }]);
  });

  it('finding 3: a read error after the stream (a missing --stderr file) still prints every event translated before it, then exits 2 naming the file', async () => {
    const missing = join(dir, 'no-such-stderr.txt');
    const { stdout: expected } = await tcab(['translate', '--harness', 'claude', '--json', '--result', join(dir, 'r3.json'), FIXTURE]);
    const failure = await tcab(['translate', '--harness', 'claude', '--json', '--stderr', missing, FIXTURE]).then(
      () => undefined,
      (error: unknown) => error as { code: number; stdout: string; stderr: string },
    );
    expect(failure).toMatchObject({ code: 2, stderr: expect.stringContaining(missing) });
    const types = (ndjson: string) => ndjson.trim().split('\n').map((l) => (JSON.parse(l) as { type: string }).type);
    expect(types(failure!.stdout)).toEqual(types(expected));
  });

  it('adds the terminal error with the recorded stderr for a non-zero exit', async () => {
    const err = join(dir, 'err.txt');
    writeFileSync(err, 'Error: Invalid API key\n');
    const { stdout } = await tcab(['translate', '--harness', 'claude', '--json', '--result', join(dir, 'r2.json'), '--stderr', err, '--exit-code', '1', join(ROOT, 'harnesses/claude/fixtures/claude-2.1.197-error-400.jsonl')]);
    const events = stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; message?: string });
    expect(events.at(-2)).toMatchObject({ type: 'warning', message: 'Error: Invalid API key' });
    expect(events.at(-1)).toMatchObject({ type: 'error', message: 'claude exited with code 1:\nError: Invalid API key' });
  });

  it('prices a transcript that does not name its model with --model (Codex)', async () => {
    const { stderr } = await tcab(['translate', '--harness', 'codex', '--model', 'gpt-5-codex', join(ROOT, 'harnesses/codex/fixtures/codex-0.171.0-exec-json.jsonl')]);
    const result = JSON.parse(stderr);
    // 6300 uncached + 2100 cached input, 560 output at $1.25 / $0.125 / $10 per million; API key, none reported -> actual unset.
    expect(result.cost).toMatchObject({ canonical_model: 'openai/gpt-5-codex', actual_cost_usd: null });
    expect(result.cost.comparable_cost_usd).toBeCloseTo((6300 * 1.25 + 2100 * 0.125 + 560 * 10) / 1e6, 12);
  });

  it('names the problem for an unknown harness or a bad flag, with exit status 2', async () => {
    await expect(tcab(['translate', '--harness', 'nope', FIXTURE])).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('unknown harness "nope"') });
    await expect(tcab(['translate', '--harness', 'claude', '--exit-code', 'x', FIXTURE])).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('--exit-code: must be an integer') });
  });

  it('stops quietly when its reader goes away early (`| head`), as a Unix filter does', async () => {
    const big = join(dir, 'big.jsonl');
    writeFileSync(big, readFileSync(FIXTURE, 'utf8').repeat(1500));
    const child = spawn(process.execPath, [join(ROOT, 'cli/main.ts'), 'translate', '--harness', 'claude', '--json', big], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await once(child.stdout, 'data');
    child.stdout.destroy();
    const [code] = (await once(child, 'exit')) as [number | null];
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  });

  it('replays a recorded ACP session (--protocol acp) and a side file\'s lines (--side), as the driver read them live', async () => {
    const acp = join(ROOT, 'shared/translate/acp/fixtures/gemini-0.61.0-acp-tools.jsonl');
    const replayed = (await tcab(['translate', '--harness', 'gemini', '--protocol', 'acp', '--json', acp])).stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; command?: string });
    expect(replayed.filter((e) => e.type === 'command').map((e) => e.command)).toEqual(['ls -la && echo hi', 'exit 3']);
    // The same file read as Gemini's own stdout stream is not its format: every line unknown, none lost.
    const asStdout = (await tcab(['translate', '--harness', 'gemini', '--json', acp])).stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string });
    expect(asStdout.filter((e) => e.type === 'command')).toEqual([]);
    // Grok's tool calls are only in its session's updates.jsonl: without --side there are none.
    const grok = join(ROOT, 'harnesses/grok/fixtures/grok-0.2.111-tools');
    const types = async (extra: string[]) => (await tcab(['translate', '--harness', 'grok', '--json', ...extra, `${grok}.jsonl`])).stdout.trim().split('\n').map((l) => (JSON.parse(l) as { type: string }).type);
    expect((await types([])).filter((t) => t === 'command')).toEqual([]);
    expect((await types(['--side', `updates=${grok}.updates`])).filter((t) => t === 'command').length).toBeGreaterThan(0);
    await expect(tcab(['translate', '--harness', 'grok', '--side', 'updates', `${grok}.jsonl`])).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('--side: expected <name>=<file>') });
  });
});
