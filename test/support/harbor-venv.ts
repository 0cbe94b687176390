// Harbor's own ATIF models, for tests that check our trajectories against them: a Python virtual environment with
// the pinned `harbor` from PyPI, made once per machine under ~/.cache/tcab/harbor-venv-<version> and reused.
// harbor needs Python >= 3.12: $TCAB_PYTHON, else python3.12 (pyenv: PYENV_VERSION defaults to 3.12.1), else python3.
// pip reaches PyPI as configured on the machine (PIP_INDEX_URL, PIP_CERT / SSL_CERT_FILE behind a proxy).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { HARBOR_VERSION } from '../../export/atif/schema.ts';

const VALIDATOR = join(import.meta.dirname, 'validate-atif.py');
/** First creation downloads harbor and its dependencies (~200 packages): minutes on a slow link. */
const INSTALL_TIMEOUT_MS = 15 * 60_000;

export function harborVenvDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'tcab', `harbor-venv-${HARBOR_VERSION}`);
}

function pythonCandidates(env: NodeJS.ProcessEnv): { command: string; env: NodeJS.ProcessEnv }[] {
  const candidates = env.TCAB_PYTHON ? [{ command: env.TCAB_PYTHON, env }] : [];
  return [...candidates, { command: 'python3.12', env: { ...env, PYENV_VERSION: env.PYENV_VERSION ?? '3.12.1' } }, { command: 'python3', env }];
}

function findPython(env: NodeJS.ProcessEnv): { command: string; env: NodeJS.ProcessEnv } {
  for (const candidate of pythonCandidates(env)) {
    try {
      const ok = execFileSync(candidate.command, ['-c', 'import sys; print(sys.version_info >= (3, 12))'], { env: candidate.env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
      if (ok.trim() === 'True') return candidate;
    } catch {
      // not installed, or not runnable: the next candidate
    }
  }
  throw new Error('harbor needs Python >= 3.12: set TCAB_PYTHON, or install python3.12');
}

/**
 * The venv's python, creating the venv first when absent. It is built beside its final place and renamed into
 * it once harbor imports, so an interrupted install or two test files racing never leave a half venv in use
 * (only `bin/python` is used: a renamed venv's script shebangs point at the build dir).
 */
export function harborPython(env: NodeJS.ProcessEnv = process.env): string {
  const dir = harborVenvDir(env);
  const python = join(dir, 'bin', 'python');
  if (existsSync(join(dir, '.tcab-ready'))) return python;
  const base = findPython(env);
  const building = `${dir}.building-${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  mkdirSync(join(dir, '..'), { recursive: true });
  const run = (command: string, args: string[], runEnv: NodeJS.ProcessEnv) => execFileSync(command, args, { env: runEnv, stdio: ['ignore', 'ignore', 'inherit'], timeout: INSTALL_TIMEOUT_MS });
  try {
    run(base.command, ['-m', 'venv', building], base.env);
    const venvEnv = { ...env, VIRTUAL_ENV: building };
    run(join(building, 'bin', 'python'), ['-m', 'pip', 'install', '--quiet', `harbor==${HARBOR_VERSION}`], venvEnv);
    run(join(building, 'bin', 'python'), ['-c', 'import harbor.models.trajectories, harbor.utils.trajectory_validator'], venvEnv);
    writeFileSync(join(building, '.tcab-ready'), `harbor==${HARBOR_VERSION}\n`);
    try {
      renameSync(building, dir);
    } catch (error) {
      // Another process finished first: use its venv.
      if (!existsSync(join(dir, '.tcab-ready'))) throw error;
    }
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
  return python;
}

export interface HarborVerdict {
  ok: boolean;
  errors: string[];
  /** Harbor's own serialization of the parsed document equals the document. */
  roundtrip: boolean;
}

/** Validates trajectories with Harbor's Trajectory model and TrajectoryValidator, in one Python process. */
export function validateWithHarbor(documents: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): Record<string, HarborVerdict> {
  const out = execFileSync(harborPython(env), [VALIDATOR], { input: JSON.stringify(documents), encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, stdio: ['pipe', 'pipe', 'inherit'] });
  return JSON.parse(out) as Record<string, HarborVerdict>;
}
