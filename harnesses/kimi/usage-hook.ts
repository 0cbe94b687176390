// Kimi Code writes token usage only into its session's wire files
// ($KIMI_CODE_HOME/sessions/wd_*/<session id>/agents/<agent>/wire.jsonl, `usage.record` lines), a path nested below
// directories the CLI names (workspace hash, session id), while the driver reads a session's side files only as
// bare names directly in HOME (Invocation.reports, read with O_NOFOLLOW, regular files only, size-capped). So
// Kimi's own Stop hook (config.toml `[[hooks]]`) runs this script as the run user when a prompt's turn finishes
// (Kimi awaits the hook before it ends the turn and exits; its SessionEnd hook does not fire in prompt mode): it
// copies the usage-bearing lines of that session's wire files into HOME/kimi-usage.jsonl. It runs with the
// run user's rights only (a link the agent planted can only make it read what the agent could read itself; the
// driver then reads the copy without following links), and it keeps only the few small record kinds the
// translator reads, so the copy stays far below the driver's size cap.

/** The report's file name in the run HOME (Invocation.reports). */
export const USAGE_REPORT = 'kimi-usage.jsonl';
/** Where the hook script lives, relative to HOME. */
export const HOOK_SCRIPT = '.kimi-code/tcab-usage-hook.mjs';

/**
 * The hook script (plain Node, no imports beyond node:fs/node:path; the run's PATH gives the driver's Node).
 * Input on stdin: Kimi's hook payload (`{hook_event_name, session_id, cwd, ...}`, snake_case). A session id that is
 * not a plain name writes nothing.
 */
export const HOOK_SOURCE = `import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
const KEEP = /"type":"(?:usage\\.record|turn\\.prompt|turn\\.ended)"/;
let id;
try { id = JSON.parse(readFileSync(0, 'utf8')).session_id; } catch { process.exit(0); }
if (typeof id !== 'string' || !/^[A-Za-z0-9_.-]+$/.test(id) || id.startsWith('.')) process.exit(0);
const home = process.env.KIMI_CODE_HOME;
const out = [];
if (home) {
  const sessions = join(home, 'sessions');
  let workspaces = [];
  try { workspaces = readdirSync(sessions); } catch {}
  for (const wd of workspaces) {
    const agents = join(sessions, wd, id, 'agents');
    let names = [];
    try { names = readdirSync(agents); } catch { continue; }
    for (const agent of names.sort()) {
      let text = '';
      try { text = readFileSync(join(agents, agent, 'wire.jsonl'), 'utf8'); } catch { continue; }
      for (const line of text.split('\\n')) if (KEEP.test(line)) out.push(line);
    }
  }
}
writeFileSync(join(process.env.HOME, ${JSON.stringify(USAGE_REPORT)}), out.map((l) => l + '\\n').join(''), { mode: 0o600 });
`;

/** config.toml: the Stop hook that runs the script (Kimi runs hook commands through a shell). */
export const CONFIG_TOML = `# Written by tcab: copies the session's usage records into HOME when a turn finishes.
[[hooks]]
event = "Stop"
command = 'node "$HOME/${HOOK_SCRIPT}"'
timeout = 30
`;
