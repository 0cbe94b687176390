// The run's sessions, one after another (a continued session resumes the one before by its id): each session's
// record and raw usage go into the run; the first session that is cancelled, times out or fails ends the run
// with that outcome, else the run succeeded.
import type { HarnessAdapter } from '../../shared/adapter.ts';
import type { RunSpec } from '../../shared/run.ts';
import { runSession } from '../stages/session.ts';
import { acpInvocation } from '../../shared/translate/acp/adapter.ts';
import type { StageContext } from '../stages/context.ts';
import type { ModelRoute } from './gateway.ts';
import type { RunState } from './state.ts';

export async function runSessions(run: RunState, ctx: StageContext, spec: RunSpec, adapter: HarnessAdapter, binary: string, route: ModelRoute, recordDir?: string, protocol: 'stdout' | 'acp' = 'stdout'): Promise<void> {
  let resumeSessionId: string | undefined;
  for (let index = 0; index < spec.sessions; index++) {
    const prompt = index === 0 ? spec.prompt : spec.continuePrompt;
    const request = {
      model: spec.model,
      prompt,
      workdir: ctx.dirs.workspace,
      home: ctx.dirs.home,
      resumeSessionId,
      baseUrl: route.baseUrl,
      authMode: run.authMode ?? undefined,
    };
    // Over ACP the same setup (environment, config files) starts the agent with its manifest's ACP command.
    const invocation = protocol === 'acp' ? acpInvocation(run.manifest!, adapter.invocation(request), spec.model) : adapter.invocation(request);
    const record = recordDir ? { dir: recordDir, name: `session-${index + 1}` } : undefined;
    run.running = 'session';
    const { summary, outcome: proc } = await runSession(ctx, adapter, invocation, binary, route.secretEnv, spec.maxRuntimeSeconds, record, protocol === 'acp' ? { prompt } : undefined);
    run.running = 'driver';
    const result = summary.result;
    run.rawUsage.push(result.raw_usage ?? null);
    run.sessions.push({
      index,
      session_id: result.session_id ?? null,
      exit_code: proc.code,
      signal: proc.signal,
      tokens: result.tokens,
      reported_cost_usd: result.reported_cost_usd,
      is_error: result.is_error ?? null,
      duration_ms: proc.durationMs,
      counts: summary.counts,
    });
    if (proc.cancelled) {
      const hit = run.budgetHit;
      return end(run, hit ? 'budget_exceeded' : 'cancelled', hit ? `the run reached its budget (${hit.limit} ${hit.max}): ${hit.message}` : 'cancelled during the session');
    }
    if (proc.timedOut) return end(run, 'timed_out', `exceeded the maximum runtime of ${spec.maxRuntimeSeconds}s`);
    if (proc.spawnError || proc.code !== 0 || result.is_error === true) {
      return end(run, 'harness_failed', proc.code !== 0 ? `session ${index + 1} exited with ${proc.code ?? proc.signal}` : `session ${index + 1} reported an error`);
    }
    resumeSessionId = result.session_id ?? resumeSessionId;
  }
  end(run, 'succeeded', `${run.sessions.length} session(s) completed`);
}

function end(run: RunState, outcome: RunState['outcome'], message: string): void {
  run.outcome = outcome;
  run.message = message;
}
