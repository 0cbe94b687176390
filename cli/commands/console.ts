// `tcab console`: the operator console on a workstation, from a kubeconfig and a NATS URL: the same routes as the
// dispatcher serves (console/server), plus GET/POST /harness-config (the dispatcher's API, on this kubeconfig's
// rights) so a cap changed from the page is written as a HarnessConfig. Anyone on the machine can reach its port,
// so reads need a credential as in the cluster (issue 33): the write token (--token, TCAB_CONSOLE_TOKEN, or a
// random one printed once at start with a login URL carrying it in the fragment) or a read-only token
// (--read-token, TCAB_CONSOLE_READ_TOKEN) to hand to someone who should only look.
import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { Option } from 'commander';
import { KubeConfig } from '@kubernetes/client-node';
import { listHarnesses } from '../../harnesses/registry.ts';
import { InfrastructureError } from '../../shared/exit-codes.ts';
import { InvalidInputError } from '../../shared/errors.ts';
import { buildApi, closeApi } from '../../console/api/server.ts';
import { kubeHarnessConfigStore } from '../../console/api/harness-config-store.ts';
import { mountConsole } from '../../console/server/mount.ts';
import { natsSources } from '../../console/server/nats-sources.ts';
import { DEFAULT_STALLED_AFTER_SECONDS } from '../../console/server/routes.ts';
import { ConsoleNats } from '../../nats/console-reader.ts';
import { READER_INBOX_PREFIX } from '../../nats/auth/permissions.ts';
import { checkServerUrls, reasonOf, shownServers } from '../../nats/server-urls.ts';
import { natsSettingsFromEnv } from '../../nats/settings.ts';
import type { NatsSettings } from '../../nats/settings.ts';
import { kubeConsoleSources } from './console-sources.ts';

export interface ConsoleCommandOptions {
  port: string;
  host: string;
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  nats: string;
  creds?: string;
  token?: string;
  readToken?: string;
  stalledAfter: string;
}

function integer(value: string, flag: string, min: number, max: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw new InvalidInputError(flag, `must be an integer from ${min} to ${max}, got "${value}"`);
  return n;
}

/** The NATS settings: --nats with TCAB_NATS_* credentials, --creds over TCAB_NATS_CREDS, a reader's inbox prefix. */
export function consoleNatsSettings(options: Pick<ConsoleCommandOptions, 'nats' | 'creds'>, env: NodeJS.ProcessEnv): NatsSettings {
  checkServerUrls(options.nats.split(',').map((s) => s.trim()), '--nats');
  const settings = natsSettingsFromEnv(env, options.nats, '--nats')!;
  return { ...settings, ...(options.creds ? { credsFile: options.creds } : {}), inboxPrefix: settings.inboxPrefix ?? READER_INBOX_PREFIX };
}

/** The write token: --token, else TCAB_CONSOLE_TOKEN, else a random one (`generated`: print it once). */
export function consoleToken(flag: string | undefined, env: NodeJS.ProcessEnv): { token: string; generated: boolean } {
  const given = flag ?? env.TCAB_CONSOLE_TOKEN;
  if (given !== undefined && given.trim() === '') throw new InvalidInputError('--token', 'must not be empty');
  return given ? { token: given, generated: false } : { token: randomBytes(24).toString('base64url'), generated: true };
}

/** The read-only token: --read-token, else TCAB_CONSOLE_READ_TOKEN, else none (reads then take the write token). */
export function consoleReadToken(flag: string | undefined, env: NodeJS.ProcessEnv, writeToken: string): string {
  const given = flag ?? env.TCAB_CONSOLE_READ_TOKEN ?? '';
  if ((flag !== undefined || env.TCAB_CONSOLE_READ_TOKEN !== undefined) && given.trim() === '') throw new InvalidInputError('--read-token', 'must not be empty');
  // The same value for both would make the "read-only" token a write token too.
  if (given && given === writeToken) throw new InvalidInputError('--read-token', 'must differ from the write token');
  return given;
}

/**
 * What `tcab console` prints once it listens (stderr): where, and how to log in. A token the operator gave is
 * never echoed; a generated one is, once, in a login URL whose fragment (`#token=`) the page reads and removes
 * from the address bar; a fragment is never sent to the server, so the token stays out of request logs.
 */
export function servingLines(url: string, scope: string, write: { token: string; generated: boolean }, readToken: string): string {
  const base = url.replace(/\/+$/, '');
  const lines = [`tcab console: ${base}/ (${scope})`];
  if (write.generated) {
    lines.push(`tcab console: log in: ${base}/#token=${encodeURIComponent(write.token)}`, `tcab console: write token (cancel, caps): ${write.token}`);
  } else lines.push(`tcab console: log in with the write token you gave${readToken ? ' or the read token' : ''} (the page asks; or open ${base}/#token=<token>)`);
  return `${lines.join('\n')}\n`;
}

async function serveConsole(options: ConsoleCommandOptions): Promise<void> {
  const port = integer(options.port, '--port', 0, 65535);
  const stalledAfterSeconds = integer(options.stalledAfter, '--stalled-after', 1, 7 * 24 * 3600);
  const write = consoleToken(options.token, process.env);
  const { token } = write;
  const readToken = consoleReadToken(options.readToken, process.env, token);
  const settings = consoleNatsSettings(options, process.env);
  const config = new KubeConfig();
  if (options.kubeconfig) config.loadFromFile(options.kubeconfig);
  else config.loadFromDefault();
  if (options.context) config.setCurrentContext(options.context);

  const kube = kubeConsoleSources(config, options.namespace);
  try {
    await kube.start();
  } catch (error) {
    throw new InfrastructureError(`cannot list Runs through the kubeconfig (${config.getCurrentContext()}): ${reasonOf(error)}`, { cause: error });
  }
  let nats: ConsoleNats;
  try {
    nats = await ConsoleNats.connect(settings);
  } catch (error) {
    await kube.stop();
    throw new InfrastructureError(`cannot connect to NATS at ${shownServers(settings.servers)}: ${reasonOf(error)}`, { cause: error });
  }
  const app = buildApi({
    store: kubeHarnessConfigStore(config),
    slugs: () => listHarnesses().map((h) => h.manifest.slug),
    token: () => token,
    readAuth: { mode: 'token', readToken: () => readToken },
    readiness: () => ({ informersSynced: true, natsConnected: true, leader: false }),
  });
  const mounted = mountConsole(app, { sources: { ...kube.sources, ...natsSources(nats) }, token: () => token, stalledAfterSeconds });
  await mounted.started;
  const url = await app.listen({ port, host: options.host });
  // One write: whoever reads the first line has the login lines too.
  const scope = `Runs ${options.namespace ? `of namespace ${options.namespace}` : 'of every namespace'}, context ${config.getCurrentContext()}, NATS ${shownServers(settings.servers)}`;
  process.stderr.write(servingLines(url, scope, write, readToken));

  const stopped = Promise.withResolvers<void>();
  process.once('SIGINT', () => stopped.resolve());
  process.once('SIGTERM', () => stopped.resolve());
  await stopped.promise;
  await mounted.stop();
  await closeApi(app, 1000);
  await Promise.all([kube.stop(), nats.close()]);
}

export function registerConsoleCommand(program: Command): void {
  program
    .command('console')
    .description('serve the operator console (every Run live, one run\'s feed, the harnesses) from a kubeconfig and NATS')
    .addOption(new Option('--port <port>', 'port to listen on').default('8080'))
    .addOption(new Option('--host <host>', 'address to listen on').default('127.0.0.1'))
    .addOption(new Option('--kubeconfig <file>', 'kubeconfig file (default: KUBECONFIG or ~/.kube/config)'))
    .addOption(new Option('--context <name>', 'kubeconfig context (default: its current one)'))
    .addOption(new Option('--namespace <ns>', 'only the Runs of this namespace (default: every namespace)'))
    .addOption(new Option('--nats <url>', 'NATS server (several: comma-separated)').env('TCAB_NATS_URL').default('nats://127.0.0.1:4222'))
    .addOption(new Option('--creds <file>', "a reader .creds file (the auth Secret's reader.creds)").env('TCAB_NATS_CREDS'))
    .addOption(new Option('--token <token>', 'the write token (cancel, caps; it also reads) (default: TCAB_CONSOLE_TOKEN, else a random one, printed with a login URL)'))
    .addOption(new Option('--read-token <token>', 'a read-only token for the pages and streams (default: TCAB_CONSOLE_READ_TOKEN, else none: reads take the write token)'))
    .addOption(new Option('--stalled-after <seconds>', 'mark a live run stalled after this long without an event').default(String(DEFAULT_STALLED_AFTER_SECONDS)))
    .action((options: ConsoleCommandOptions) => serveConsole(options));
}
