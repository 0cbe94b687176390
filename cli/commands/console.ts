// `tcab console`: the operator console on a workstation, from a kubeconfig and a NATS URL: the same routes as the
// dispatcher serves (console/server), plus GET/POST /harness-config (the dispatcher's API, on this kubeconfig's
// rights) so a cap changed from the page is written as a HarnessConfig. Writes need the bearer token: --token,
// TCAB_CONSOLE_TOKEN, or a random one printed once at start.
import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { Option } from 'commander';
import { KubeConfig } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { listHarnesses } from '../../harnesses/registry.ts';
import { InfrastructureError } from '../../shared/exit-codes.ts';
import { InvalidInputError } from '../../shared/errors.ts';
import { buildApi, closeApi } from '../../dispatcher/api/server.ts';
import { kubeHarnessConfigStore } from '../../dispatcher/api/kube-store.ts';
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

async function serveConsole(options: ConsoleCommandOptions): Promise<void> {
  const port = integer(options.port, '--port', 0, 65535);
  const stalledAfterSeconds = integer(options.stalledAfter, '--stalled-after', 1, 7 * 24 * 3600);
  const { token, generated } = consoleToken(options.token, process.env);
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
    metrics: new Registry(),
    readiness: () => ({ informersSynced: true, natsConnected: true, leader: false }),
  });
  const mounted = mountConsole(app, { sources: { ...kube.sources, ...natsSources(nats) }, token: () => token, stalledAfterSeconds });
  await mounted.started;
  const url = await app.listen({ port, host: options.host });
  // One write: whoever reads the first line has the token line too.
  const serving = `tcab console: ${url}/ (Runs ${options.namespace ? `of namespace ${options.namespace}` : 'of every namespace'}, context ${config.getCurrentContext()}, NATS ${shownServers(settings.servers)})\n`;
  process.stderr.write(generated ? `${serving}tcab console: write token (cancel, caps): ${token}\n` : serving);

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
    .addOption(new Option('--token <token>', 'bearer token writes need (default: TCAB_CONSOLE_TOKEN, else a random one, printed)'))
    .addOption(new Option('--stalled-after <seconds>', 'mark a live run stalled after this long without an event').default(String(DEFAULT_STALLED_AFTER_SECONDS)))
    .action((options: ConsoleCommandOptions) => serveConsole(options));
}
