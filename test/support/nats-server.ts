// Starts a real nats-server with JetStream (file storage) on a free loopback port, built from the Go module
// proxy by scripts/ensure-nats-server.sh and cached. Stop/start keep the port and the store, like a restart.
import { spawn, execFileSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderAuthConf } from '../../nats/auth/bundle.ts';
import type { NatsAuthBundle } from '../../nats/auth/bundle-schema.ts';

const ROOT = join(import.meta.dirname, '..', '..');

export function natsServerBinary(): string {
  return execFileSync(join(ROOT, 'scripts', 'ensure-nats-server.sh'), { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * A loopback port nothing listens on, for tests of "cannot connect": below 1024, where no test binds, and off
 * fetch's list of blocked ports. (A free ephemeral port found earlier can be taken by a parallel test's server
 * before the client connects, which then answers instead of refusing.)
 */
export const REFUSING_PORT = 1023;

export class NatsServer {
  readonly port: number;
  readonly storeDir: string;
  private child: ChildProcess | undefined;
  private readonly binary: string;
  private readonly maxPayload: number | undefined;
  private readonly auth: NatsAuthBundle | undefined;

  private constructor(binary: string, port: number, storeDir: string, maxPayload?: number, auth?: NatsAuthBundle) {
    this.binary = binary;
    this.port = port;
    this.storeDir = storeDir;
    this.maxPayload = maxPayload;
    this.auth = auth;
  }

  /**
   * @param auth operator mode (decentralized JWT auth, issue 22): the server includes the bundle's auth.conf, as
   * the chart's NATS does, with its account resolver's JWTs in the store (kept across stop/resume, like its volume).
   */
  static async start(options: { maxPayload?: number; auth?: NatsAuthBundle } = {}): Promise<NatsServer> {
    const server = new NatsServer(natsServerBinary(), await freePort(), mkdtempSync(join(tmpdir(), 'tcab-nats-')), options.maxPayload, options.auth);
    await server.resume();
    return server;
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  /** (Re)starts the server on the same port and store; resolves when it accepts clients. */
  resume(): Promise<void> {
    // max_payload has no command-line flag: it goes in a config file.
    const config = join(this.storeDir, 'nats.conf');
    const lines = this.maxPayload ? [`max_payload: ${this.maxPayload}`] : [];
    if (this.auth) {
      writeFileSync(join(this.storeDir, 'auth.conf'), renderAuthConf(this.auth, join(this.storeDir, 'jwt')));
      lines.push('include ./auth.conf');
    }
    writeFileSync(config, lines.map((l) => `${l}\n`).join(''));
    const args = ['-c', config, '-a', '127.0.0.1', '-p', String(this.port), '-js', '-sd', join(this.storeDir, 'js')];
    const child = spawn(this.binary, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    this.child = child;
    return new Promise((resolve, reject) => {
      let log = '';
      const onData = (chunk: Buffer) => {
        log += chunk.toString();
        if (log.includes('Server is ready')) {
          child.stderr!.off('data', onData);
          child.stderr!.resume();
          resolve();
        }
      };
      child.stderr!.on('data', onData);
      child.once('exit', (code) => reject(new Error(`nats-server exited with ${code}: ${log}`)));
    });
  }

  /**
   * Freezes the server (SIGSTOP) or thaws it (SIGCONT): its connections stay open and nothing answers, as with a
   * server that went away without closing them (a deleted Pod behind a Service, a partition).
   */
  freeze(frozen = true): void {
    this.child?.kill(frozen ? 'SIGSTOP' : 'SIGCONT');
  }

  /** Stops the server (SIGTERM) and waits for it to exit. */
  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGCONT'); // a frozen server would not act on SIGTERM until thawed
      child.kill('SIGTERM');
    });
  }

  async dispose(): Promise<void> {
    await this.stop();
    rmSync(this.storeDir, { recursive: true, force: true });
  }
}
