// The driver as an Agent Client Protocol client (issue 41): the harness was started with its manifest's ACP command
// (stdin and stdout piped) and this speaks the protocol over them with the ACP SDK (@agentclientprotocol/sdk):
// initialize (no file-system or terminal capability: the agent uses its own tools, in its own process, as the run
// user), session/new in the workspace, one session/prompt, permission requests answered by the run's policy (allow:
// runs are unattended, as the stdout invocations' auto-approve flags are), session/cancel at the deadline. The
// agent's stdout lines are the session's raw stream: the session stage records and translates them (AcpTranslator)
// and hands each one here too. An ACP agent is a server: once its turn ended the driver closes its stdin and, if it
// does not exit by itself, ends it.
import { Writable } from 'node:stream';
import { ClientApp, ndJsonStream, PROTOCOL_VERSION } from '@agentclientprotocol/sdk';
import type { PermissionOption, RequestPermissionResponse } from '@agentclientprotocol/sdk';
import type { SplitLine } from '../../shared/translate/lines.ts';

/** How long an agent gets to exit after its stdin closed at the end of its turn, before it is ended. */
export const ACP_EXIT_GRACE_MS = 3000;

/** The run's permission policy: allow (once, else always); an agent that offers no allowing option is refused. */
export function allowByPolicy(options: readonly Pick<PermissionOption, 'optionId' | 'kind'>[]): RequestPermissionResponse {
  const allow = options.find((o) => o.kind === 'allow_once') ?? options.find((o) => o.kind === 'allow_always');
  return allow ? { outcome: { outcome: 'selected', optionId: allow.optionId } } : { outcome: { outcome: 'cancelled' } };
}

export interface AcpTurn {
  /** The prompt's stop reason, when the turn ended. */
  stopReason?: string;
  /** Why the conversation failed (a request the agent refused or never answered), when it did. */
  failure?: string;
}

/**
 * One ACP conversation over a child's stdio. `attach` gets the child's stdin when it was spawned; `received` every
 * stdout line; `processEnded` when the child is gone. `turn` resolves when the prompt turn ended or failed; `ended`
 * aborts once the agent should be stopped (its turn is over and it did not exit within the grace).
 */
export class AcpConversation {
  readonly ended = new AbortController();
  readonly turn: Promise<AcpTurn>;
  private resolveTurn!: (turn: AcpTurn) => void;
  private input!: ReadableStreamDefaultController<Uint8Array>;
  private stdin: NodeJS.WritableStream | undefined;
  private cancelTimer: NodeJS.Timeout | undefined;
  private exitTimer: NodeJS.Timeout | undefined;
  private readonly options: { prompt: string; cwd: string; deadline?: number; exitGraceMs?: number };
  private sessionId: string | undefined;
  private gone = false;

  constructor(options: { prompt: string; cwd: string; deadline?: number; exitGraceMs?: number }) {
    this.options = options;
    this.turn = new Promise((resolve) => (this.resolveTurn = resolve));
  }

  /** The child is running: speak to it. */
  attach(stdin: NodeJS.WritableStream): void {
    this.stdin = stdin;
    stdin.on('error', () => undefined); // the agent may exit before reading everything
    const input = new ReadableStream<Uint8Array>({ start: (controller) => void (this.input = controller) });
    const stream = ndJsonStream(Writable.toWeb(stdin as Writable) as WritableStream<Uint8Array>, input);
    const app = new ClientApp()
      .onRequest('session/request_permission', ({ params }) => allowByPolicy(params.options))
      // Updates are translated from the raw lines (the recorded stream); the SDK needs a handler to accept them.
      .onNotification('session/update', () => undefined);
    const connection = app.connect(stream);
    void this.converse(connection.agent).then(this.finishTurn, (error: unknown) => this.finishTurn({ failure: error instanceof Error ? error.message : String(error) }));
  }

  private async converse(agent: ReturnType<ClientApp['connect']>['agent']): Promise<AcpTurn> {
    await agent.request('initialize', { protocolVersion: PROTOCOL_VERSION, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false } });
    const session = await agent.request('session/new', { cwd: this.options.cwd, mcpServers: [] });
    this.sessionId = session.sessionId;
    if (this.options.deadline !== undefined) {
      // At the deadline the turn is cancelled the protocol's way; the process deadline ends the agent after it.
      this.cancelTimer = setTimeout(() => void agent.notify('session/cancel', { sessionId: session.sessionId }).catch(() => undefined), Math.max(0, this.options.deadline - Date.now()));
    }
    const response = await agent.request('session/prompt', { sessionId: session.sessionId, prompt: [{ type: 'text', text: this.options.prompt }] });
    return { stopReason: response.stopReason };
  }

  private readonly finishTurn = (turn: AcpTurn): void => {
    clearTimeout(this.cancelTimer);
    this.resolveTurn(turn);
    // The turn is over: the agent's stdin closes (most agents exit then); one that stays is ended after the grace.
    this.stdin?.end();
    if (!this.gone) this.exitTimer = setTimeout(() => this.ended.abort(), this.options.exitGraceMs ?? ACP_EXIT_GRACE_MS);
  };

  /** One line the agent wrote on stdout. */
  received(line: SplitLine): void {
    if (this.gone) return;
    this.input.enqueue(Buffer.from(`${line.text}\n`));
  }

  /** The child exited (or was never started): a turn still open failed. */
  processEnded(): void {
    this.gone = true;
    clearTimeout(this.exitTimer);
    clearTimeout(this.cancelTimer);
    try {
      this.input?.close();
    } catch {
      // already closed
    }
    this.resolveTurn({ failure: 'the agent exited before its turn ended' });
  }

  /** The session id the agent gave (`session/new`). */
  session(): string | undefined {
    return this.sessionId;
  }
}
