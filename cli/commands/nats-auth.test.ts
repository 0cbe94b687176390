// `tcab nats auth init|creds` as an operator runs them (the real CLI in a child process): the files are 0600 and
// never overwritten, and what they hold works against a real nats-server in operator mode: a run credential from
// `creds --run` publishes its run, and `tcab events follow` reads it back with the init's reader.creds.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NatsSink } from '../../driver/sinks/nats.ts';
import { mintDispatcherCredentials, parseNatsAuthBundle, renderAuthConf } from '../../nats/auth/index.ts';
import { RunStream } from '../../nats/result-consumer.ts';
import { natsSettings, natsSettingsFromEnv } from '../../nats/settings.ts';
import { agentEvent, runResult } from '../../test/support/nats-auth.ts';
import { NatsServer } from '../../test/support/nats-server.ts';
import { parseDuration } from './nats-auth.ts';

const ROOT = join(import.meta.dirname, '..', '..');

function tcab(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [join(ROOT, 'cli/main.ts'), ...args], { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 60_000 }, (_e, stdout, stderr) =>
      resolve({ code: child.exitCode, stdout, stderr }),
    );
  });
}

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tcab-nats-auth-cli-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('parseDuration', () => {
  it.each([['90s', 90_000], ['30m', 1_800_000], ['2h', 7_200_000], ['7d', 604_800_000]])('%s -> %d ms', (text, ms) => {
    expect(parseDuration(text, '--expires')).toBe(ms);
  });
  it.each(['0h', '2', 'h', '1.5h', '-1h', '2w', ''])('refuses %j', (text) => {
    expect(() => parseDuration(text, '--expires')).toThrow(/--expires: .* is not a duration/);
  });
});

describe('tcab nats auth init', () => {
  it('writes the three files 0600 (auth.conf rendered from the bundle with the resolver dir), and never over existing ones', async () => {
    const out = join(dir, 'init');
    const first = await tcab(['nats', 'auth', 'init', '--out', out, '--resolver-dir', '/srv/nats/jwt']);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('include auth.conf');
    expect(first.stdout).toContain('nats.auth.existingSecret');
    for (const name of ['bundle.json', 'auth.conf', 'reader.creds']) expect(statSync(join(out, name)).mode & 0o777).toBe(0o600);
    expect(statSync(out).mode & 0o777).toBe(0o700);
    const bundleText = readFileSync(join(out, 'bundle.json'), 'utf8');
    expect(readFileSync(join(out, 'auth.conf'), 'utf8')).toBe(renderAuthConf(parseNatsAuthBundle(bundleText), '/srv/nats/jwt'));

    const second = await tcab(['nats', 'auth', 'init', '--out', out]);
    expect(second.code).toBe(2);
    expect(second.stderr).toMatch(/--out: .*bundle\.json exists; it is not overwritten/);
    expect(readFileSync(join(out, 'bundle.json'), 'utf8')).toBe(bundleText);
  });

  it('writes nothing when any of the three exists (a mixed set would not work together)', async () => {
    const out = join(dir, 'partial');
    await tcab(['nats', 'auth', 'init', '--out', out]);
    rmSync(join(out, 'bundle.json'));
    rmSync(join(out, 'auth.conf'));
    expect((await tcab(['nats', 'auth', 'init', '--out', out])).stderr).toMatch(/reader\.creds exists/);
    expect(() => statSync(join(out, 'bundle.json'))).toThrow(/ENOENT/);
  });
});

describe('tcab nats auth creds, against a server running the init', () => {
  let server: NatsServer;
  let dispatcher: RunStream;
  const out = () => join(dir, 'live');
  beforeAll(async () => {
    await tcab(['nats', 'auth', 'init', '--out', out()]);
    const bundle = parseNatsAuthBundle(readFileSync(join(out(), 'bundle.json'), 'utf8'));
    server = await NatsServer.start({ auth: bundle });
    dispatcher = await RunStream.connect(natsSettings(server.url, { credsText: (await mintDispatcherCredentials(bundle)).creds }));
  });
  afterAll(async () => {
    await dispatcher?.close();
    await server?.dispose();
  });

  it("a run credential publishes its run; `tcab events follow` reads it with the init's reader.creds", async () => {
    const minted = await tcab(['nats', 'auth', 'creds', '--bundle', join(out(), 'bundle.json'), '--run', 'cli-run', '--expires', '1h', '--out', join(out(), 'run.creds')]);
    expect(minted).toMatchObject({ code: 0, stdout: '' });
    expect(minted.stderr).toContain('TCAB_NATS_INBOX_PREFIX=_INBOX_cli-run');
    expect(statSync(join(out(), 'run.creds')).mode & 0o777).toBe(0o600);

    const settings = natsSettingsFromEnv({ TCAB_NATS_URL: server.url, TCAB_NATS_CREDS: join(out(), 'run.creds'), TCAB_NATS_INBOX_PREFIX: '_INBOX_cli-run' })!;
    const sink = new NatsSink({ settings, deliverBy: Date.now() + 30_000, warn: () => undefined });
    sink.event({ runId: 'cli-run', seq: 1, event: agentEvent('hello from the run') });
    sink.result(runResult('cli-run', 'done', 1));
    await sink.close();
    expect(sink.stats).toMatchObject({ published: 2, undelivered: 0 });

    const followed = await tcab(['events', 'follow', 'cli-run', '--json', '--nats', server.url], { TCAB_NATS_CREDS: join(out(), 'reader.creds') });
    expect(followed.code).toBe(0);
    expect(followed.stdout).toContain('hello from the run');
    const anonymous = await tcab(['events', 'follow', 'cli-run', '--json', '--nats', server.url]);
    expect(anonymous.code).toBe(3);
    expect(anonymous.stderr).toMatch(/Authorization Violation/);
  });

  it('a reader credential from creds (stdout) reads too; a bundle that is not one is exit 2', async () => {
    const reader = await tcab(['nats', 'auth', 'creds', '--bundle', join(out(), 'bundle.json'), '--reader', '--expires', '1h']);
    expect(reader.code).toBe(0);
    writeFileSync(join(out(), 'reader2.creds'), reader.stdout, { mode: 0o600 });
    const followed = await tcab(['events', 'follow', 'cli-run', '--json', '--nats', server.url], { TCAB_NATS_CREDS: join(out(), 'reader2.creds') });
    expect(followed.code).toBe(0);
    const wrong = await tcab(['nats', 'auth', 'creds', '--bundle', join(out(), 'auth.conf'), '--reader']);
    expect(wrong).toMatchObject({ code: 2, stdout: '' });
    expect(wrong.stderr).toMatch(/--bundle: .* is not a tcab NATS auth bundle\.json/);
  });
});
