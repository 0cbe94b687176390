// A zod schema for "any JSON object", passed through by reference: tool inputs and parameters are kept whole (an
// `unknown` event shows them as the harness printed them) and are never copied on the translation hot path, as a
// z.looseObject({}) would copy every key of every record.
import { z } from 'zod';
import type { JsonObject } from './json.ts';

export const AnyJsonObject = z.custom<JsonObject>((value) => typeof value === 'object' && value !== null && !Array.isArray(value), 'expected an object');
