// Public surface of the gateway's usage meter (issue 34): token usage read from a response's own bytes, per wire.
import type { WireProtocol } from '../../shared/gateway.ts';
import type { UsageShape } from '../../shared/usage.ts';
import { ANTHROPIC_WIRE_USAGE } from './anthropic.ts';
import { OPENAI_RESPONSES_WIRE_USAGE } from './openai-responses.ts';
import { OPENAI_CHAT_WIRE_USAGE } from './openai-chat.ts';
import { GEMINI_WIRE_USAGE } from './gemini.ts';

export { usageMeter } from './meter.ts';
export type { UsageMeter, UsageMeterOptions } from './meter.ts';

/** Per wire: the classes it reports (the others are always null) and how its fields map, for docs. */
export const WIRE_USAGE_SHAPES: Readonly<Record<WireProtocol, UsageShape>> = Object.freeze({
  anthropic: ANTHROPIC_WIRE_USAGE,
  'openai-responses': OPENAI_RESPONSES_WIRE_USAGE,
  'openai-chat': OPENAI_CHAT_WIRE_USAGE,
  gemini: GEMINI_WIRE_USAGE,
});
