// Public surface of the stub model servers.
import type { StubScriptInput } from '../../shared/stub-script.ts';
import type { HarnessManifest } from '../../shared/manifest.ts';

export { startStubModelServer } from './server.ts';
export type { RecordedRequest, StubModelServer } from './server.ts';

type Wire = NonNullable<HarnessManifest['stub_wire']>;

/**
 * The offline demo's session: a shell command that creates a file and shows it, a read of it, a final answer.
 * Tool names and arguments are each wire's flagship harness's (Claude Code for the Anthropic wire).
 */
export function defaultScriptFor(wire: Wire): StubScriptInput {
  switch (wire) {
    case 'anthropic-messages':
      return {
        steps: [
          {
            thinking: 'The task wants a file named hello.txt; a shell command can create and show it in one go.',
            text: 'I will create hello.txt and show its content.',
            tool: { name: 'Bash', args: { command: "printf 'hello\\n' > hello.txt && cat hello.txt", description: 'Create hello.txt and print it' } },
          },
          { tool: { name: 'Read', args: { file_path: '{workdir}/hello.txt' } } },
          { text: 'Created hello.txt containing "hello".' },
        ],
      };
    case 'openai-responses':
      return {
        steps: [
          {
            thinking: 'The task wants a file named hello.txt; a shell command can create and show it in one go.',
            text: 'I will create hello.txt and show its content.',
            tool: { name: 'exec_command', args: { cmd: "printf 'hello\\n' > hello.txt && cat hello.txt" } },
          },
          { text: 'Created hello.txt containing "hello".' },
        ],
      };
    default:
      return { steps: [{ text: 'Done.' }] };
  }
}

/** Substitutes `{name}` placeholders in every string of a script (e.g. `{workdir}`). */
export function renderScript(script: StubScriptInput, vars: Record<string, string>): StubScriptInput {
  const render = (value: unknown): unknown => {
    if (typeof value === 'string') return value.replace(/\{(\w+)\}/g, (whole, name: string) => vars[name] ?? whole);
    if (Array.isArray(value)) return value.map(render);
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, render(v)]));
    return value;
  };
  return render(script) as StubScriptInput;
}
