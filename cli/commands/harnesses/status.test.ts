import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildStatusRows, formatStatusTable } from './status.ts';
import type { StatusRow } from './status.ts';
import { getHarness, listHarnesses } from '../../../harnesses/registry.ts';

const exec = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..', '..');
let home: string;
beforeAll(() => {
  home = mkdtempSync(join(tmpdir(), 'tcab-status-'));
});
afterAll(() => rmSync(home, { recursive: true, force: true }));

const status = (env: Record<string, string>) =>
  exec(process.execPath, [join(ROOT, 'cli/main.ts'), 'harnesses', 'status', '--json'], {
    // A clean environment: only what the test sets, plus PATH and the fake HOME.
    env: { PATH: process.env.PATH ?? '', HOME: home, ...env },
    timeout: 20_000,
  }).then(({ stdout }) => JSON.parse(stdout) as Pick<StatusRow, 'slug' | 'mode' | 'available' | 'detail' | 'key'>[]);

describe('tcab harnesses status', () => {
  it('lists every harness and gg, saying exactly what to set or sign in to', async () => {
    const rows = await status({});
    expect(rows.map((r) => r.slug)).toEqual(listHarnesses().map((h) => h.manifest.slug));
    expect(rows.map((r) => r.slug)).toContain('gg');
    expect(rows.find((r) => r.slug === 'claude')).toEqual(
      expect.objectContaining({ available: false, mode: null, detail: 'set ANTHROPIC_API_KEY or TCAB_API_KEY_CLAUDE, or run `claude` and sign in to create ~/.claude/.credentials.json' }),
    );
  });

  it('resolves the same way the run path does: keys, per-harness overrides, and subscription files', async () => {
    const rows = await status({ ANTHROPIC_API_KEY: 'sk-ant-fake-status', TCAB_API_KEY_CODEX: 'sk-fake-codex', TCAB_AUTH_MODE_GG: 'api-key' });
    expect(rows.find((r) => r.slug === 'claude')).toMatchObject({ available: true, mode: 'api-key', detail: 'key from ANTHROPIC_API_KEY, injected as ANTHROPIC_API_KEY' });
    expect(rows.find((r) => r.slug === 'codex')).toMatchObject({ available: true, mode: 'api-key', detail: 'key from TCAB_API_KEY_CODEX, injected as CODEX_API_KEY' });
    expect(rows.find((r) => r.slug === 'gg')).toMatchObject({ available: true, detail: 'key from ANTHROPIC_API_KEY, injected as TCAB_GG_API_KEY' });
  });

  it('reads no credential contents: a credential path that would block any open() is only stat-ed', async () => {
    // A FIFO blocks open() until a writer appears: if status opened it, the command would hang past its timeout.
    mkdirSync(join(home, '.codex'), { recursive: true });
    await exec('mkfifo', [join(home, '.codex/auth.json')]);
    const rows = await status({});
    expect(rows.find((r) => r.slug === 'codex')).toMatchObject({ available: true, mode: 'subscription', detail: 'signed in: ~/.codex/auth.json' });
    rmSync(join(home, '.codex'), { recursive: true, force: true });
  });

  it('says where an api-key run\'s key goes: the gateway provider of the key found, or key in harness with the manifest\'s reason', async () => {
    const rows = await status({ ANTHROPIC_API_KEY: 'sk-ant-fake-status', OPENAI_API_KEY: 'sk-fake-openai', TCAB_API_KEY_OPENCODE: 'sk-or-fake', AMP_API_KEY: 'amp-fake-key-1234' });
    const key = (slug: string) => rows.find((r) => r.slug === slug)!.key;
    expect(key('claude')).toEqual({ gateway: ['anthropic'] });
    expect(key('codex')).toEqual({ gateway: ['openai'] });
    // qwen's first variable (DASHSCOPE_API_KEY) is unset: the OpenAI key is used, so the gateway's openai provider.
    expect(key('qwen')).toEqual({ gateway: ['openai'] });
    // The per-harness override is a key for the first host variable's provider.
    expect(key('opencode')).toEqual({ gateway: ['openrouter'] });
    const amp = getHarness('amp').manifest.gateway as { key_in_harness: string };
    expect(rows.find((r) => r.slug === 'amp')).toMatchObject({ available: true, mode: 'api-key', key: { keyInHarness: amp.key_in_harness } });
    // No key found yet: every route the manifest declares.
    expect(key('gemini')).toEqual({ gateway: ['google'] });
    expect(key('cursor')).toEqual({ keyInHarness: (getHarness('cursor').manifest.gateway as { key_in_harness: string }).key_in_harness });
  });

  it('subscription mode has no key route', () => {
    const rows = buildStatusRows(listHarnesses(), { env: { ANTHROPIC_API_KEY: 'k' }, credentialFilePresent: () => true });
    expect(rows.find((r) => r.slug === 'claude')).toMatchObject({ mode: 'subscription', available: true });
    expect(rows.find((r) => r.slug === 'claude')!.key).toBeUndefined();
  });

  it('the table has a KEY column and lists why each key in harness stays there', () => {
    const plain = { dim: (s: string) => s, yellow: (s: string) => s };
    const rows: StatusRow[] = [
      { slug: 'claude', name: 'Claude Code', setting: 'auto', mode: 'api-key', available: true, detail: 'key from ANTHROPIC_API_KEY, injected as ANTHROPIC_API_KEY', key: { gateway: ['anthropic'] } },
      { slug: 'amp', name: 'Amp', setting: 'auto', mode: null, available: false, detail: 'set AMP_API_KEY or TCAB_API_KEY_AMP', key: { keyInHarness: 'the Amp service makes every model call' } },
      { slug: 'codex', name: 'Codex CLI', setting: 'auto', mode: 'subscription', available: true, detail: 'signed in: ~/.codex/auth.json' },
    ];
    expect(formatStatusTable(rows, plain)).toBe(
      [
        'SLUG    MODE          AVAILABLE  KEY                 DETAIL',
        'claude  api-key       yes        gateway: anthropic  key from ANTHROPIC_API_KEY, injected as ANTHROPIC_API_KEY',
        'amp     -             no         key in harness      set AMP_API_KEY or TCAB_API_KEY_AMP',
        'codex   subscription  yes        -                   signed in: ~/.codex/auth.json',
        '',
        'key in harness (api-key mode: the key is in the harness environment, not behind the model gateway):',
        '  amp  the Amp service makes every model call',
        '',
      ].join('\n'),
    );
  });

  it('a subscription login that runs one at a time says so, with the reason (issue 34); an api-key row does not', () => {
    const rows = buildStatusRows(listHarnesses(), { env: { TCAB_AUTH_MODE: 'subscription' }, credentialFilePresent: () => true });
    const codex = rows.find((r) => r.slug === 'codex')!;
    expect(codex).toMatchObject({ mode: 'subscription', available: true, serialized: expect.stringMatching(/refresh token is single-use/) });
    expect(rows.find((r) => r.slug === 'claude')!.serialized).toBeUndefined();
    const keyed = buildStatusRows(listHarnesses(), { env: { OPENAI_API_KEY: 'sk-x', TCAB_AUTH_MODE: 'api-key' }, credentialFilePresent: () => true });
    expect(keyed.find((r) => r.slug === 'codex')!.serialized).toBeUndefined();
    const plain = { dim: (s: string) => s, yellow: (s: string) => s };
    expect(formatStatusTable([codex], plain)).toContain(`one run at a time (subscription mode: runs sharing the login wait for each other, and the refreshed login is written back):\n  codex  ${codex.serialized}\n`);
  });

  it('an invalid mode setting is reported on its row, naming the variable, without failing the listing', () => {
    const rows = buildStatusRows(listHarnesses(), { env: { TCAB_AUTH_MODE_CLAUDE: 'oauth' }, credentialFilePresent: () => false });
    expect(rows.find((r) => r.slug === 'claude')).toMatchObject({ available: false, setting: 'invalid', detail: 'TCAB_AUTH_MODE_CLAUDE: "oauth" is not an auth mode; use one of auto, subscription, api-key' });
    expect(rows.find((r) => r.slug === 'codex')!.setting).toBe('auto');
  });
});
