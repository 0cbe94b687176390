// Span operations replayed into finished span records, the way an SDK would apply them, refusing any operation an
// SDK would ignore or get wrong (a second start, an event on an unknown or ended span, an end before the start).
// The fold's tests read the tree from it; it also says what a run looks like as spans without a backend.
import type { SpanAttributes } from './attributes.ts';
import type { SpanOperation } from './fold.ts';

export interface SpanRecord {
  span: string;
  parent: string | null;
  name: string;
  start: number;
  end: number | undefined;
  error: string | undefined;
  attributes: SpanAttributes;
  events: { name: string; at: number; attributes: SpanAttributes }[];
}

export function replay(ops: readonly SpanOperation[]): Map<string, SpanRecord> {
  const spans = new Map<string, SpanRecord>();
  const live = (id: string, what: string) => {
    const span = spans.get(id);
    if (!span) throw new Error(`${what} on unknown span ${id}`);
    if (span.end !== undefined) throw new Error(`${what} on ended span ${id}`);
    return span;
  };
  for (const op of ops) {
    switch (op.op) {
      case 'start':
        if (spans.has(op.span)) throw new Error(`span ${op.span} started twice`);
        if (op.parent !== null) live(op.parent, `child ${op.span}`);
        spans.set(op.span, { span: op.span, parent: op.parent, name: op.name, start: op.at, end: undefined, error: undefined, attributes: { ...op.attributes }, events: [] });
        break;
      case 'event':
        live(op.span, `event ${op.name}`).events.push({ name: op.name, at: op.at, attributes: op.attributes });
        break;
      case 'set':
        Object.assign(live(op.span, 'set').attributes, op.attributes);
        break;
      case 'end': {
        const span = live(op.span, 'end');
        if (op.at < span.start) throw new Error(`span ${op.span} ends before it starts`);
        span.end = op.at;
        span.error = op.error;
        break;
      }
    }
  }
  return spans;
}
