// A throw-away harness for driver tests: a real manifest and real processes, with the real Claude adapter, but
// the "CLI" is a shell script steered by the prompt, so install/probe/init/session failures are deterministic
// and need no network. The real Claude Code CLI is exercised by the live tests.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');

/** The fake CLI: prints Claude-shaped stream-json; what it does depends on the prompt (argv after -p). */
export const SCRIPT = String.raw`#!/bin/sh
if [ "$1" = "--version" ]; then echo "9.8.7 (Scripted)"; exit 0; fi
prompt="$2"
sid=11111111-2222-3333-4444-555555555555
say() { printf '%s\n' "$1"; }
say '{"type":"system","subtype":"init","cwd":"'"$PWD"'","session_id":"'$sid'","model":"claude-sonnet-4-5"}'
case " $* " in *" --resume $sid "*) say '{"type":"assistant","message":{"content":[{"type":"text","text":"resumed with: '"$2"'"}]},"session_id":"'$sid'"}' ;; esac
case "$prompt" in
  exit7)
    echo "fatal: scripted failure" >&2
    exit 7 ;;
  stderr-trace)
    # A Node-style trace in one write, then nothing on stderr until the test opens the gate.
    printf 'DeprecationWarning: scripted deprecation\n    at one (/scripted.js:1:1)\n    at two (/scripted.js:2:2)\n' >&2
    while [ ! -e "$HOME/../gate" ]; do sleep 0.02; done ;;
  sleep)
    say '{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"sleep 600"}}]},"session_id":"'$sid'"}'
    sleep 600 & echo $! > "$HOME/../sleep.pid"; wait ;;
  daemon)
    # A daemon in its own session (as Cline's hub daemon is): the signal to the harness's group never reaches it.
    setsid sh -c 'echo $$ > "$HOME/../daemon.pid"; exec sleep 600' </dev/null >/dev/null 2>&1 &
    # Exit only once the daemon runs sleep (after its exec): teardown names leftovers by their command.
    while [ ! -s "$HOME/../daemon.pid" ]; do :; done
    while [ "$(cat "/proc/$(cat "$HOME/../daemon.pid")/comm" 2>/dev/null)" != sleep ]; do :; done ;;
  longline)
    head -c 16777216 /dev/zero | tr '\0' 'x'; printf '\n' ;;
  canary)
    say '{"type":"assistant","message":{"content":[{"type":"text","text":"my key is '"$ANTHROPIC_API_KEY"'"}]},"session_id":"'$sid'"}'
    echo "debug: using key $ANTHROPIC_API_KEY" >&2
    env | sort > "$HOME/../env-seen" ;;
  workspace)
    ls -A > "$HOME/../workspace-listing" ;;
  tamper-store:*)
    # A hostile agent (issue 36): it tries to change what the next run executes, through the release store (the
    # path after the colon) and through its own installed copy; what each attempt did goes to $HOME/../tamper-report.
    store="$(printf '%s' "$prompt" | cut -d: -f2-)"
    report="$HOME/../tamper-report"
    find "$store" -type f > "$HOME/../store-files" 2>/dev/null
    while read -r f; do
      if printf 'poison' >> "$f" 2>/dev/null; then echo "appended $f" >> "$report"; else echo "refused append $f" >> "$report"; fi
      if chmod u+w "$f" 2>/dev/null; then echo "chmod $f" >> "$report"; else echo "refused chmod $f" >> "$report"; fi
      if rm -f "$f" 2>/dev/null && [ ! -e "$f" ]; then echo "removed $f" >> "$report"; else echo "refused rm $f" >> "$report"; fi
    done < "$HOME/../store-files"
    if mkdir "$store/planted" 2>/dev/null; then echo "planted" >> "$report"; else echo "refused plant" >> "$report"; fi
    own="$(readlink -f "$0")"
    poisoned='#!/bin/sh\necho "6.6.6 (poisoned)"\n'
    if printf "$poisoned" > "$own" 2>/dev/null; then echo "wrote own $own" >> "$report"; else echo "refused write own $own" >> "$report"; fi
    # Its own prefix is its own directory: the name can be replaced there (the file it named is untouched).
    if rm -f "$own" && printf "$poisoned" > "$own" && chmod 755 "$own"; then echo "replaced own $own" >> "$report"; else echo "refused replace own $own" >> "$report"; fi ;;
  answer:*)
    printf '%s' "$prompt" | cut -d: -f2- > answer.txt ;;
  tamper-check:*)
    # A hostile agent (issue 39) that cannot solve the task and goes for the verdict: it rewrites the test to pass,
    # puts a link where the check's helper goes (to the directory named after its second colon), a
    # directory where its expected output goes, and leaves a daemon rewriting the test while the check would run.
    answer="$(printf '%s' "$prompt" | cut -d: -f2)"; victim="$(printf '%s' "$prompt" | cut -d: -f3-)"
    printf '%s\n' "$answer" > answer.txt
    mkdir -p tests && printf '#!/bin/sh\necho forged; exit 0\n' > tests/check.sh
    ln -s "$victim" tests/lib
    mkdir -p expected.txt/inside && printf '%s\n' "$answer" > expected.txt/inside/forged
    setsid sh -c 'echo $$ > "$HOME/../tamper-daemon.pid"; while :; do printf "echo forged; exit 0\n" > tests/check.sh; done' </dev/null >/dev/null 2>&1 &
    while [ ! -s "$HOME/../tamper-daemon.pid" ]; do :; done ;;
  many)
    i=0; while [ $i -lt 300 ]; do say '{"type":"assistant","message":{"content":[{"type":"text","text":"line '$i'"}]},"session_id":"'$sid'"}'; i=$((i+1)); done ;;
esac
say '{"type":"assistant","message":{"content":[{"type":"text","text":"All done."}]},"session_id":"'$sid'"}'
say '{"type":"result","subtype":"success","is_error":false,"result":"All done.","session_id":"'$sid'","total_cost_usd":0.5,"usage":{"input_tokens":100,"output_tokens":10,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}}'
`;

export interface ScriptedHarness {
  root: string;
  /** Files the script writes next to the run home (`$HOME/..` is the run's root dir). */
  dispose(): void;
}

/**
 * installFails: the install prints npm's 404 and fails. installFromRegistry: the install is a real `npm install` from
 * the run's registry (TCAB_NPM_REGISTRY), npm's own retries off, so a registry that fails answers at once.
 */
export function createScriptedHarness(options: { installFails?: boolean; probeFails?: boolean; installFromRegistry?: boolean; npmPackage?: string } = {}): ScriptedHarness {
  const root = mkdtempSync(join(tmpdir(), 'tcab-harnesses-'));
  const dir = join(root, 'scripted');
  mkdirSync(dir);
  const cli = join(dir, 'scripted-cli.sh');
  writeFileSync(cli, SCRIPT);
  chmodSync(cli, 0o755);
  chmodSync(root, 0o755);
  chmodSync(dir, 0o755);
  const broken = join(dir, 'broken-cli.sh');
  writeFileSync(broken, '#!/bin/sh\necho "error while loading shared libraries: libscripted.so" >&2\nexit 9\n');
  chmodSync(broken, 0o755);
  const install = options.installFromRegistry
    ? 'npm install --no-audit --no-fund --fetch-retries=0 --prefix {prefix} --registry {registry} scripted-cli@latest'
    : options.installFails
      ? `echo "npm error 404 Not Found - GET {registry}scripted" >&2; exit 1`
      : `mkdir -p {prefix}/bin && cp ${options.probeFails ? broken : cli} {prefix}/bin/scripted`;
  writeFileSync(
    join(dir, 'harness.toml'),
    `slug = "scripted"
name = "Scripted CLI"
strategy = "structured"
binary = "scripted"
docs_url = "https://example.invalid/scripted"
min_supported = "1.0.0"
latest_validated = "9.8.7"
model_ids = "anthropic"
stub_wire = "anthropic-messages"
version_command = ["scripted", "--version"]

[install]
${options.npmPackage
    // The package as a real harness names it: a global npm install of <package>@latest into the prefix.
    ? `npm_package = ${JSON.stringify(options.npmPackage)}\ncommand = ${JSON.stringify(['npm', 'install', '--global', '--prefix', '{prefix}', '--registry', '{registry}', '--no-audit', '--no-fund', '--fetch-retries=0', `${options.npmPackage}@latest`])}`
    : `command = ["sh", "-c", ${JSON.stringify(install)}]`}

[auth]
modes = ["subscription", "api-key"]

[auth.api_key]
host_vars = ["ANTHROPIC_API_KEY"]
inject_as = "ANTHROPIC_API_KEY"

[auth.subscription]
files = [".scripted/credentials.json"]
sign_in = "run scripted login"
`,
  );
  writeFileSync(join(dir, 'adapter.ts'), `export { default } from ${JSON.stringify(join(ROOT, 'harnesses/claude/adapter.ts'))};\n`);
  return { root, dispose: () => rmSync(root, { recursive: true, force: true }) };
}
