// The ACP client (issue 41): the same stub scenario run twice on today's release of an agent that has both a stdout
// mapping and ACP, once each way, and the events compared. What ACP gives and loses against each stdout mapping is
// asserted here, not only described: the same tool activity (class, command, path) and final answer in the same
// order; tokens only from the stdout mapping (these agents send no ACP usage); the model gateway's wire usage
// either way.
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getHarness } from '../../harnesses/registry.ts';
import { loadScenarios } from '../../driver/verify/run-scenarios.ts';
import { executeRun } from '../../driver/run.ts';
import { MemorySink } from '../../driver/sinks/sink.ts';
import { resolveRunUser } from '../../driver/run-user.ts';
import { defaultRunBase, runDirsFor } from '../../driver/run-dirs.ts';
import { renderScript, startStubModelServer } from '../../driver/stub-models/index.ts';
import { STUB_API_KEY } from '../../driver/offline-stub.ts';
import { RunSpec } from '../../shared/run.ts';
import type { RunResult } from '../../shared/run.ts';
import type { HarnessEvent } from '../../shared/events.ts';


async function runScenario(slug: string, scenarioName: string, protocol: 'stdout' | 'acp'): Promise<{ events: HarnessEvent[]; result: RunResult }> {
  const entry = getHarness(slug);
  const [, scenario] = loadScenarios(entry).find(([name]) => name === scenarioName)!;
  const base = defaultRunBase(process.env);
  const runId = `acp-${slug}-${protocol}-${Date.now().toString(36)}`;
  const dirs = runDirsFor(base, runId);
  // Paths in the script are the workspace's, which differs per run: rendered per run, compared relative to it.
  const stub = await startStubModelServer({ script: renderScript(scenario.script, { workdir: dirs.workspace, home: dirs.home }) });
  const sink = new MemorySink();
  const record = mkdtempSync(join(tmpdir(), 'tcab-acp-'));
  try {
    const result = await executeRun(RunSpec.parse({ harness: slug, model: scenario.model ?? 'mock-model', prompt: scenario.prompt, maxRuntimeSeconds: 600, protocol }), {
      runId,
      env: process.env,
      sinks: [sink],
      user: resolveRunUser(process.env, process.getuid?.() ?? 1000),
      credentialSource: { kind: 'home', home: join(base, 'no-credentials') },
      stub: { baseUrl: stub.url, apiKey: STUB_API_KEY },
      recordDir: record,
    });
    const events = sink.events.map((e) => e.event).map((e) => (('path' in e && typeof e.path === 'string') ? { ...e, path: e.path.replace(dirs.workspace, '<ws>') } : e) as HarnessEvent);
    // TCAB_ACP_COMPARE_RECORD=<dir> keeps each ACP session's raw stream (shared/translate/acp/fixtures are these).
    const keep = process.env.TCAB_ACP_COMPARE_RECORD;
    if (keep && protocol === 'acp') copyFileSync(join(record, 'session-1.stdout'), join(keep, `${slug}-${result.harness_version}-acp-${scenarioName}.jsonl`));
    return { events, result };
  } finally {
    await stub.close();
    rmSync(record, { recursive: true, force: true });
  }
}

/** Each tool event's class and subject, in order: what both paths must agree on, but for each agent's known losses. */
interface Activity {
  type: string;
  subject: string;
  exit?: number;
}
function activity(events: readonly HarnessEvent[]): Activity[] {
  return events.flatMap((e): Activity[] => {
    if (e.type === 'command') return [{ type: e.type, subject: e.command, exit: e.exit_code }];
    if (e.type === 'read' || e.type === 'write' || e.type === 'list') return [{ type: e.type, subject: e.path ?? '' }];
    if (e.type === 'search') return [{ type: e.type, subject: e.query }];
    return [];
  });
}

/**
 * What ACP loses against each agent's stdout mapping, measured on today's releases (the test fails when that
 * changes, so this table stays true):
 * - gemini: no raw input over ACP. A search is described only by its title (`'hello' within ./`), list_directory is a
 *   `search` titled ".", and a command's exit code is not reported; the skill call Gemini refuses has no kind.
 * - opencode: nothing but the tokens, its skill tool (kind `other`) and its subagent tool `task` (kind `think`), which
 *   ACP cannot class.
 */
const LOSSES: Record<string, { searchSubjects: boolean; listAsSearch: boolean; exitCodes: boolean }> = {
  gemini: { searchSubjects: true, listAsSearch: true, exitCodes: true },
  opencode: { searchSubjects: false, listAsSearch: false, exitCodes: false },
};

describe.each([['gemini'], ['opencode']])('%s: the tools scenario over stdout and over ACP', (slug) => {
  it('reports the same tool activity and answer in the same order, but for its listed losses; usage only from the stdout stream, wire usage both ways', async () => {
    const stdout = await runScenario(slug, 'tools', 'stdout');
    const acp = await runScenario(slug, 'tools', 'acp');
    const shown = (r: typeof stdout) => JSON.stringify(r.events.filter((e) => e.type !== 'system').map((e) => ({ ...e, timestamp: undefined })), null, 1);
    process.stderr.write(`acp-compare ${slug} stdout:\n${shown(stdout)}\nacp:\n${shown(acp)}\n`);
    expect(stdout.result.outcome).toBe('succeeded');
    expect(acp.result.outcome, shown(acp)).toBe('succeeded');
    const loss = LOSSES[slug]!;
    const expected = activity(stdout.events).map((a) => ({
      type: loss.listAsSearch && a.type === 'list' ? 'search' : a.type,
      subject: (loss.searchSubjects && (a.type === 'search' || a.type === 'list')) ? expect.any(String) : a.subject,
      exit: loss.exitCodes ? undefined : a.exit,
    }));
    expect(activity(acp.events)).toEqual(expected);
    expect(expected.length).toBeGreaterThanOrEqual(6);
    // The losses are real: the stdout stream has what ACP lacks.
    if (loss.exitCodes) expect(activity(stdout.events).some((a) => a.exit === 3)).toBe(true);
    if (loss.listAsSearch) expect(activity(stdout.events).some((a) => a.type === 'list')).toBe(true);
    const answers = (r: typeof stdout) => r.events.filter((e) => e.type === 'agent').map((e) => e.message.trim());
    expect(answers(acp).at(-1)).toBe(answers(stdout).at(-1));
    // Unknown over ACP: only the skill and subagent calls (kinds `other` and `think`), which the stdout mapping
    // reports as a skill and a subagent's start (or, refused, as its own unknown).
    const unknowns = acp.events.filter((e) => e.type === 'unknown');
    const classedOnlyByStdout = stdout.events.filter((e) => e.type === 'skill' || e.type === 'unknown' || (e.type === 'orchestration' && e.action === 'subagent_started'));
    expect(unknowns.length).toBe(classedOnlyByStdout.length);
    for (const unknown of unknowns) expect(JSON.stringify(unknown)).toMatch(/"title":"(skill|task)"|activate_skill/);
    // Tokens: the stdout stream reports them; these agents send none over ACP (null, not 0); the gateway's wire
    // usage is there both ways.
    expect(stdout.result.tokens?.input).toBeGreaterThan(0);
    expect(acp.result.tokens).toBeNull();
    expect(acp.result.wire?.tokens?.input).toBeGreaterThan(0);
    expect(acp.result.session_ids).toHaveLength(1);
  }, 900_000);
});
