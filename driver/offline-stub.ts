// The embedded default's model: `tcab run --stub` starts the built-in stub model server on loopback with a short
// scripted session for the harness's wire format, and hands the harness a throw-away key. No credentials, no
// network beyond 127.0.0.1; the harness CLI itself is real.
import type { HarnessManifest } from '../shared/manifest.ts';
import type { RunSpec } from '../shared/run.ts';
import { InvalidInputError } from '../shared/errors.ts';
import { defaultScriptFor, renderScript, startStubModelServer } from './stub-models/index.ts';
import type { StubModelServer } from './stub-models/index.ts';
import { runDirsFor } from './run-dirs.ts';

/** Not a secret: the stub accepts any key. Long enough to exercise the scrubber like a real key. */
export const STUB_API_KEY = 'tcab-stub-key-not-a-secret-0000';

export interface OfflineStub {
  baseUrl: string;
  apiKey: string;
  /** The running stub (its recorded requests let tests check what the harness sent). */
  server: StubModelServer;
  close(): Promise<void>;
}

export async function startOfflineStub(manifest: HarnessManifest, _spec: RunSpec, runBase: string, runId: string): Promise<OfflineStub> {
  if (!manifest.stub_wire) {
    throw new InvalidInputError('--stub', `${manifest.name} cannot run against the stub model: ${manifest.offline_note ?? 'it needs its vendor backend'}`);
  }
  // Tools such as Claude Code's Read take absolute paths: the script names the run's workspace.
  const workdir = runDirsFor(runBase, runId).workspace;
  const server = await startStubModelServer({ script: renderScript(manifest.stub_script ?? defaultScriptFor(manifest.stub_wire), { workdir }) });
  return { baseUrl: server.url, apiKey: STUB_API_KEY, server, close: () => server.close() };
}
