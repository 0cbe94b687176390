// probe_harness: the binary's version command. Confirms the install produced a working CLI and records the
// harness version. It must never start a session or anything that could cost money: only the manifest's
// version command runs, with no API key in its environment.
import type { HarnessManifest } from '../../shared/manifest.ts';
import { runProcess } from '../process.ts';
import { OutputTail, StageFailure, stage } from './context.ts';
import type { StageContext } from './context.ts';

const PROBE_TIMEOUT_MS = 60_000;

export function parseVersion(manifest: HarnessManifest, output: string): string | undefined {
  const match = new RegExp(manifest.version_pattern).exec(output);
  return match?.[1];
}

export async function probeHarness(ctx: StageContext, manifest: HarnessManifest, binary: string): Promise<string> {
  return stage(ctx, 'probe_harness', `probing ${manifest.version_command.join(' ')}`, async () => {
    const tail = new OutputTail();
    const [, ...args] = manifest.version_command;
    const outcome = await runProcess({
      argv: [binary, ...args],
      cwd: ctx.dirs.home,
      env: { ...ctx.baseEnv, ...manifest.env },
      user: ctx.user,
      deadline: Math.min(ctx.deadline, Date.now() + PROBE_TIMEOUT_MS),
      signal: ctx.signal,
      onStdout: tail.add,
      onStderr: tail.add,
    });
    if (outcome.cancelled) throw new StageFailure('probe_harness', 'cancelled', 'probe cancelled');
    if (outcome.spawnError) throw new StageFailure('probe_harness', 'infrastructure', `the installed binary cannot run: ${outcome.spawnError.message}`);
    if (outcome.timedOut || outcome.code !== 0) {
      const why = outcome.timedOut ? 'timed out' : `exit ${outcome.code ?? outcome.signal}`;
      throw new StageFailure('probe_harness', 'infrastructure', `${manifest.version_command.join(' ')} failed (${why}): ${tail.text() || 'no output'}`);
    }
    const version = parseVersion(manifest, tail.text());
    if (!version) throw new StageFailure('probe_harness', 'infrastructure', `no version in the output of ${manifest.version_command.join(' ')}: ${tail.text() || 'empty'}`);
    return { value: version, message: `${manifest.name} ${version}` };
  });
}
