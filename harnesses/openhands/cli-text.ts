// The text lines OpenHands prints on stdout between its JSON events (openhands_cli 1.16.0, headless mode): a
// terminal-compatibility notice (entrypoint.py), "Initializing agent..." and "✓ Agent initialized with model: M"
// (setup.py), "Agent is working" / "Agent finished" around the run (tui/core/conversation_runner.py), then a
// CONVERSATION SUMMARY box restating the last message (on a failed run: the system prompt, a few hundred lines),
// "Goodbye! 👋", "Conversation ID: <hex>" and a resume hint (entrypoint.py, tui/textual_app.py). None is an agent
// message (the agent's are the JSON MessageEvents; the summary box only restates one): they are the CLI's own
// status output, which no event type expresses. Each run of text lines becomes one `unknown` event
// carrying the text (cut at MAX_BLOCK_CHARS), published before the next JSON event that reports something (a
// record that reports nothing, like the prompt echo, does not split a block) or at the end of the stream.
// Three lines are read on the way: the model, the conversation id (the session id; the stream has no other) and
// "Agent finished" (the run loop returned, so the last answer is the session's final one).

/** How much of a text block an `unknown` event keeps (the failed run's summary box holds the whole system prompt). */
export const MAX_BLOCK_CHARS = 8000;

const ESC = String.fromCharCode(27);
/** CSI sequences (colours, bold): Rich styles these lines unless TERM=dumb / NO_COLOR. */
const ANSI = new RegExp(`${ESC}\\[[0-?]*[ -/]*[@-~]`, 'g');
const MODEL = /^✓ Agent initialized with model: (\S+)\s*$/u;
const CONVERSATION_ID = /^Conversation ID: ([0-9a-f]{32}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\s*$/;
const AGENT_FINISHED = /^Agent finished\s*$/;

/** What one text line said that the session summary needs. */
export type TextFact = { kind: 'model'; model: string } | { kind: 'conversation_id'; id: string } | { kind: 'agent_finished' } | undefined;

export function readTextLine(text: string): TextFact {
  const plain = text.replace(ANSI, '');
  const model = MODEL.exec(plain);
  if (model) return { kind: 'model', model: model[1]! };
  const id = CONVERSATION_ID.exec(plain);
  if (id) return { kind: 'conversation_id', id: id[1]! };
  return AGENT_FINISHED.test(plain) ? { kind: 'agent_finished' } : undefined;
}

/** Consecutive text lines, collected until the next JSON event. */
export class TextBlock {
  private text: string | undefined;
  private cut = false;
  private bytes = 0;
  private static readonly encoder = new TextEncoder();

  add(line: string): void {
    this.bytes += TextBlock.encoder.encode(line).length + (this.text === undefined ? 0 : 1);
    if (this.text === undefined) this.text = line;
    // Past the cap only the size is counted: the block's text stops growing.
    else if (!this.cut) this.text += `\n${line}`;
    if (this.text.length > MAX_BLOCK_CHARS) {
      this.text = this.text.slice(0, MAX_BLOCK_CHARS);
      this.cut = true;
    }
  }

  /** The block as one `unknown` event (none when empty); the block starts over. */
  take(): { type: 'unknown'; raw: string; original_bytes?: number }[] {
    const { text, cut, bytes } = this;
    this.text = undefined;
    this.cut = false;
    this.bytes = 0;
    if (text === undefined) return [];
    return cut ? [{ type: 'unknown', raw: `${text}…[tcab: text cut, original ${bytes} bytes]`, original_bytes: bytes }] : [{ type: 'unknown', raw: text }];
  }
}
