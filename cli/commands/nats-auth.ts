// `tcab nats auth init|creds`: the NATS auth material for an operator's own NATS server (the chart's bundled NATS
// gets it from the dispatcher at install). init writes the three keys of the auth Secret as 0600 files; creds
// mints one more credential from bundle.json (a reader, or one run's, e.g. to try a driver by hand).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { Option } from 'commander';
import { InvalidInputError } from '../../shared/errors.ts';
import { parseRunId } from '../../shared/run-id.ts';
import { DEFAULT_RESOLVER_DIR, MAX_RUN_CREDENTIAL_LIFETIME_MS, generateNatsAuth, mintReaderCredentials, mintRunCredentials, parseNatsAuthBundle } from '../../nats/auth/index.ts';
import type { NatsAuthBundle } from '../../nats/auth/index.ts';

const UNIT_MS = { s: 1000, m: 60_000, h: 3600_000, d: 86_400_000 } as const;

/** `90s`, `30m`, `2h`, `7d` to milliseconds; anything else is the caller's mistake (exit 2). Pure. */
export function parseDuration(value: string, field: string): number {
  const m = /^(\d+)([smhd])$/.exec(value.trim());
  const ms = m ? Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS] : 0;
  if (!(ms > 0)) throw new InvalidInputError(field, `"${value}" is not a duration: a positive whole number with s, m, h or d (e.g. 2h)`);
  return ms;
}

const exists = (path: string) => new InvalidInputError('--out', `${path} exists; it is not overwritten (new keys would void every credential made with the old ones)`);

/** Writes a secret file readable by its owner only; never over an existing file (a second init would orphan keys). */
function writeSecretFile(path: string, text: string): void {
  try {
    writeFileSync(path, text, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw exists(path);
    throw error;
  }
}

function readBundle(file: string): NatsAuthBundle {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new InvalidInputError('--bundle', `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  try {
    return parseNatsAuthBundle(text);
  } catch {
    throw new InvalidInputError('--bundle', `${file} is not a tcab NATS auth bundle.json (made by \`tcab nats auth init\`)`);
  }
}

function initHelp(dir: string, resolverDir: string): string {
  return [
    `wrote ${join(dir, 'bundle.json')} (seeds: the dispatcher's only), ${join(dir, 'auth.conf')}, ${join(dir, 'reader.creds')} (mode 0600)`,
    '',
    'Next:',
    `  1. NATS server: put auth.conf next to its config and add \`include auth.conf\`; ${resolverDir} must be writable and`,
    '     persistent (revocations are stored there). JetStream must be on (jetstream: { store_dir: ... }); keep no',
    '     other users (authorization/accounts blocks) in its config. Restart it.',
    '  2. The chart: one Secret with the three files, named in nats.auth.existingSecret:',
    `       kubectl create secret generic tcab-nats-auth --from-file=${join(dir, 'bundle.json')} --from-file=${join(dir, 'auth.conf')} --from-file=${join(dir, 'reader.creds')}`,
    '       helm upgrade --install tcab charts/tcab --set nats.url=nats://YOUR-NATS:4222 --set nats.auth.existingSecret=tcab-nats-auth',
    `  3. Readers: TCAB_NATS_CREDS=${join(dir, 'reader.creds')} tcab events follow <run-id>`,
    '',
  ].join('\n');
}

export function registerNatsAuthCommands(program: Command): void {
  const auth = program.command('nats').description('NATS administration').command('auth').description("NATS auth material (decentralized JWT auth) for an operator's own NATS server");

  auth
    .command('init')
    .description('make new keys: write bundle.json, auth.conf and reader.creds (0600) into a directory')
    .requiredOption('--out <dir>', 'directory to write into (made if missing; existing files are never overwritten)')
    .option('--resolver-dir <dir>', "where the NATS server keeps account JWTs (in auth.conf)", DEFAULT_RESOLVER_DIR)
    .action(async (options: { out: string; resolverDir: string }) => {
      const dir = resolve(options.out);
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const data = await generateNatsAuth({ resolverDir: options.resolverDir });
      // All or nothing: a set mixing two inits' files would not work together.
      const taken = Object.keys(data).map((name) => join(dir, name)).find((path) => existsSync(path));
      if (taken) throw exists(taken);
      for (const [name, text] of Object.entries(data)) writeSecretFile(join(dir, name), text);
      process.stdout.write(initHelp(dir, options.resolverDir));
    });

  auth
    .command('creds')
    .description('mint a credential from bundle.json: a reader, or one run (publishes only that run)')
    .requiredOption('--bundle <file>', 'the bundle.json written by `tcab nats auth init`')
    .addOption(new Option('--reader', 'a read-only credential (tcab events, console, exporters)').conflicts('run'))
    .addOption(new Option('--run <run-id>', "one run's driver credential"))
    .option('--expires <duration>', `lifetime, e.g. 2h (required with --run, at most ${MAX_RUN_CREDENTIAL_LIFETIME_MS / UNIT_MS.d}d; a reader's default: none)`)
    .option('--out <file>', 'write the .creds here (0600) instead of stdout')
    .action(async (options: { bundle: string; reader?: boolean; run?: string; expires?: string; out?: string }) => {
      if (!options.reader && !options.run) throw new InvalidInputError('credential', 'give --reader or --run <run-id>');
      const lifetime = options.expires === undefined ? undefined : parseDuration(options.expires, '--expires');
      const bundle = readBundle(options.bundle);
      let creds: string;
      let hint: string;
      if (options.run) {
        const runId = parseRunId(options.run, '--run');
        if (lifetime === undefined) throw new InvalidInputError('--expires', 'a run credential needs one (e.g. --expires 2h)');
        if (lifetime > MAX_RUN_CREDENTIAL_LIFETIME_MS) throw new InvalidInputError('--expires', `at most ${MAX_RUN_CREDENTIAL_LIFETIME_MS / UNIT_MS.d}d for a run credential`);
        const minted = await mintRunCredentials(bundle, runId, new Date(Date.now() + lifetime));
        creds = minted.creds;
        hint = `the driver also needs TCAB_NATS_INBOX_PREFIX=${minted.inboxPrefix}`;
      } else {
        creds = (await mintReaderCredentials(bundle, lifetime === undefined ? undefined : new Date(Date.now() + lifetime))).creds;
        hint = 'use it with TCAB_NATS_CREDS=<file> tcab events follow|tail';
      }
      if (options.out) writeSecretFile(resolve(options.out), creds);
      else process.stdout.write(creds);
      process.stderr.write(`tcab: ${options.out ? `wrote ${resolve(options.out)} (0600); ` : ''}${hint}\n`);
    });
}
