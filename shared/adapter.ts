// The imperative half of a harness (spec: "Adding a harness"): how to invoke it non-interactively, how to read
// its usage, and how to translate its stdout. Adapters are pure: no fs, no child processes, no env reads.
import type { DraftEvent } from './events.ts';
import type { TokenUsage, UsageShape } from './usage.ts';

export interface InvocationRequest {
  model: string;
  prompt: string;
  /** Absolute path of the test-case workspace; the session's cwd. */
  workdir: string;
  /** Absolute path of the run user's fresh HOME. */
  home: string;
  /** Resume this harness session instead of starting a new one (multi-session runs). */
  resumeSessionId?: string;
  /** A model endpoint override (the stub, a gateway); the adapter decides how the CLI is pointed at it. */
  baseUrl?: string;
  /** The resolved auth mode (default api-key): some CLIs are configured differently for a subscription. */
  authMode?: 'subscription' | 'api-key';
}

/**
 * Where a CLI can only take its key from a config file, the file says `{tcab:api_key}` and the driver fills in
 * the injected key when it writes the file into the private run HOME (adapters never see keys).
 */
export const API_KEY_PLACEHOLDER = '{tcab:api_key}';

export interface FileToWrite {
  /** Relative to the run user's HOME. */
  path: string;
  /** May contain API_KEY_PLACEHOLDER. */
  content: string;
  mode?: number;
}

export interface Invocation {
  /** argv[0] is the binary name; the driver resolves it inside the per-run install prefix. */
  argv: string[];
  /** Harness-specific variables (no secrets: the resolver injects the key separately). */
  env: Record<string, string>;
  /** Most CLIs block or misbehave on an open stdin; `close` hands them /dev/null. */
  stdin: 'close' | { text: string };
  /** Config files the CLI needs under HOME (provider definitions, trust settings). */
  files: FileToWrite[];
  /**
   * Files the CLI writes during the session that the translator needs at its end, when the stream lacks
   * something (Copilot writes token usage only to `--usage-output-file`). Each is a plain file name directly in
   * HOME; the driver reads it after the session (regular files only, never through a symlink, size-capped) and
   * hands its text to `finish` under the same name.
   */
  reports?: string[];
  /**
   * Files the CLI writes below HOME beside its stream, holding what stdout lacks (Grok's tool calls in its session's
   * updates.jsonl, OpenHands' usage in base_state.json). Read only from the run's HOME, never through a symlink.
   */
  sideFiles?: SideFile[];
}

/**
 * One file (or one file per session directory) the CLI writes below HOME. `path` is relative to HOME, `/`-separated;
 * a `*` segment matches any one name at that level (Grok: `.grok/sessions` then two `*` levels then `updates.jsonl`): the session's
 * own directories are named by ids the CLI picks. Only files created or changed during the session count: a file
 * that was already there (an earlier session of the run) is read from where it ended.
 */
export interface SideFile {
  /** The name the translator receives it under (a key of `finish`'s reports, or `sideLine`'s first argument). */
  name: string;
  path: string;
  /**
   * `lines`: a JSONL file the CLI appends to as it works; each complete line is handed to the translator's
   * `sideLine` as it is written (the driver polls), and the rest at the session's end, before `finish`.
   * `document`: a file the CLI rewrites; read whole after the session (the newest match that changed) and handed to
   * `finish` under `name`, as a report is.
   */
  read: 'lines' | 'document';
}

/** Text of the report files a session wrote, by file name; a missing or unreadable file is absent. */
export type SessionReports = Readonly<Record<string, string>>;

/** One stdout line as the engine hands it over: the text, and the parsed value when the text is JSON. */
export interface StdoutLine {
  text: string;
  /** undefined when the line is not JSON (the engine never parses a line that cannot be an object/array). */
  json: unknown;
}

export interface SessionResult {
  session_id?: string;
  /** Normalized + raw usage, null when the harness printed none. */
  tokens: TokenUsage | null;
  raw_usage: unknown;
  /** An exact charge the harness reported for itself (e.g. Claude Code's total_cost_usd), else null. */
  reported_cost_usd: number | null;
  /** The model the harness said it used, when it says. */
  reported_model?: string;
  /** The harness's own verdict on the session, when it prints one. */
  is_error?: boolean;
  /** The final answer text, when the harness reports one separately. */
  final_text?: string;
}

export interface SessionTranslator {
  /** One stdout line in, zero or more events out, in order. */
  line(line: StdoutLine): DraftEvent[];
  /** The session id known so far (stamped on events); undefined until the harness reports one. */
  sessionId(): string | undefined;
  /**
   * One line of a `lines` side file (Invocation.sideFiles), in the order the CLI wrote it; lines of side files and
   * of stdout interleave as they arrive. Adapters without side files leave it out.
   */
  sideLine?(name: string, line: StdoutLine): DraftEvent[];
  /** End of stdout: flushes calls that never got a result and returns the session's summary. */
  finish(reports?: SessionReports): { events: DraftEvent[]; result: SessionResult };
}

export interface TranslatorContext {
  /** The session's working directory, for making reported relative paths absolute. */
  workdir?: string;
}

export interface HarnessAdapter {
  readonly slug: string;
  readonly usageShape: UsageShape;
  /**
   * `session` (default): each session reports its own usage, and a run's usage is the sum over its sessions.
   * `thread`: the harness reports a running total for the whole resumed thread (Codex), so a run's usage is the
   * last session's figure; summing would count earlier sessions again.
   */
  readonly usageScope?: 'session' | 'thread';
  invocation(request: InvocationRequest): Invocation;
  createTranslator(context: TranslatorContext): SessionTranslator;
}
