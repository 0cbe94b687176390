import { describe, expect, it } from 'vitest';
import { toolKindLookup } from './tool-kind.ts';
import type { ToolKindTable } from './tool-kind.ts';

const KINDS = { Bash: 'command', Read: 'read', view: 'view', '': 'write' } as const satisfies ToolKindTable;
const toolKind = toolKindLookup(KINDS);

/** Every name with the kind it must get, compared as one list so a failure shows them all. */
const expectKinds = (cases: [string, string][]) => expect(cases.map(([name]) => [name, toolKind(name)])).toEqual(cases);

describe('toolKindLookup', () => {
  it('gives a listed name its kind, a pre-kind (view) as is, an odd listed name too', () => {
    expectKinds([['Bash', 'command'], ['Read', 'read'], ['view', 'view'], ['', 'write']]);
  });

  it('gives every unlisted name `other`: MCP tools, new tools, other spellings', () => {
    expectKinds([['mcp__github__search', 'other'], ['bash', 'other'], [' Bash', 'other'], ['Bash\n', 'other'], ['Read ', 'other']]);
  });

  it('reads own keys only: names every object inherits are no tool', () => {
    expectKinds(['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'].map((name) => [name, 'other']));
  });

  it('reads a table without a prototype the same', () => {
    const bare = toolKindLookup(Object.assign(Object.create(null) as Record<string, 'read'>, { cat: 'read' }));
    expect([bare('cat'), bare('constructor')]).toEqual(['read', 'other']);
  });

  it('types its result as the table kinds plus other', () => {
    const kind: 'command' | 'read' | 'view' | 'write' | 'other' = toolKind('Bash');
    expect(kind).toBe('command');
  });
});
