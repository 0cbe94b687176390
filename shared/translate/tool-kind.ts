// What a harness's tool does, in one vocabulary for every translator: each `harnesses/<slug>/map-<slug>-tools.ts`
// keeps its own name -> kind table (the vendor's tool names, linked there) and makes its lookup here. A harness's
// kinds are the ones its table uses (TypeScript derives them, so its switch stays exhaustive), plus `other`.
// Two harnesses have a tool whose kind depends on its input (Copilot's `view`: a file or a directory; Goose's
// `text_editor`: its sub-command); they name that pre-kind in their table and resolve it in their mapper.

/** The kinds that have an event type of their own; `other` (unlisted, MCP, new tools) becomes `unknown`. */
export type ToolKind = 'command' | 'read' | 'write' | 'search' | 'list' | 'skill' | 'subagent' | 'other';

/** A harness's table: every tool name it documents -> its kind (or a pre-kind its mapper resolves). */
export type ToolKindTable = Readonly<Record<string, ToolKind | 'view' | 'text_editor'>>;

/**
 * A harness's `toolKind(name)` over its table; its kinds are `ReturnType<typeof toolKind>`. Every name not in the
 * table (MCP tools, new tools) is `other`. Own keys only: a tool named 'constructor' or '__proto__' is no kind.
 */
export function toolKindLookup<K extends ToolKindTable[string]>(table: Readonly<Record<string, K>>): (name: string) => K | 'other' {
  return (name) => (Object.hasOwn(table, name) ? table[name]! : 'other');
}
