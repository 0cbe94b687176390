// The gateway's own answers, each in the error shape of the provider the client thinks it is talking to, so a
// harness reports them as it would the provider's. Pure. Every one carries `x-tcab-gateway: <kind>` (to tell them
// from the provider's) and none ever holds a key or a token.
//
// Statuses and retries. The SDKs the harnesses use retry 408, 409, 429 and 5xx (Stainless's Anthropic and OpenAI
// SDKs, the AI SDK's APICallError.isRetryable, Gemini CLI's retryWithBackoff; Stainless also honours
// `x-should-retry`). A budget refusal must end the session, not be retried until the harness gives up, so:
//   Anthropic  400 invalid_request_error (docs.anthropic.com/en/api/errors): not retried.
//   OpenAI     403 insufficient_quota / code tcab_budget_exceeded: OpenAI's own insufficient_quota answer is a 429,
//              which openai-node and the AI SDK retry by status alone (Codex reads the code, most do not); 403 is
//              "permission denied" to every client, never retried, and the body still says what ran out.
//   Gemini     403 PERMISSION_DENIED (ai.google.dev/gemini-api/docs/troubleshooting): Google's quota answer,
//              429 RESOURCE_EXHAUSTED, is retried by Gemini CLI (and makes it fall back to another model).
// and every refusal (401, budget) also says `x-should-retry: false`. An unreachable upstream is a 502, which
// clients retry: it is transient.
import type { OutgoingHttpHeaders } from 'node:http';
import type { WireProtocol } from '../shared/gateway.ts';
import { errorStyleOf } from './providers.ts';

export type GatewayErrorKind = 'unauthorized' | 'budget_exceeded' | 'not_found' | 'bad_request' | 'upstream_unreachable' | 'internal_error';

export interface GatewayAnswer {
  status: number;
  headers: OutgoingHttpHeaders;
  body: string;
}

const STATUS: Record<'anthropic' | 'openai' | 'gemini', Record<GatewayErrorKind, number>> = {
  anthropic: { unauthorized: 401, budget_exceeded: 400, not_found: 404, bad_request: 400, upstream_unreachable: 502, internal_error: 500 },
  openai: { unauthorized: 401, budget_exceeded: 403, not_found: 404, bad_request: 400, upstream_unreachable: 502, internal_error: 500 },
  gemini: { unauthorized: 401, budget_exceeded: 403, not_found: 404, bad_request: 400, upstream_unreachable: 502, internal_error: 500 },
};

const ANTHROPIC_TYPE: Record<GatewayErrorKind, string> = {
  unauthorized: 'authentication_error',
  budget_exceeded: 'invalid_request_error',
  not_found: 'not_found_error',
  bad_request: 'invalid_request_error',
  upstream_unreachable: 'api_error',
  internal_error: 'api_error',
};

const OPENAI_TYPE: Record<GatewayErrorKind, { type: string; code: string }> = {
  unauthorized: { type: 'invalid_request_error', code: 'invalid_api_key' },
  budget_exceeded: { type: 'insufficient_quota', code: 'tcab_budget_exceeded' },
  not_found: { type: 'invalid_request_error', code: 'tcab_path_not_served' },
  bad_request: { type: 'invalid_request_error', code: 'tcab_bad_request' },
  upstream_unreachable: { type: 'server_error', code: 'tcab_upstream_unreachable' },
  internal_error: { type: 'server_error', code: 'tcab_gateway_error' },
};

const GEMINI_STATUS: Record<GatewayErrorKind, string> = {
  unauthorized: 'UNAUTHENTICATED',
  budget_exceeded: 'PERMISSION_DENIED',
  not_found: 'NOT_FOUND',
  bad_request: 'INVALID_ARGUMENT',
  upstream_unreachable: 'UNAVAILABLE',
  internal_error: 'INTERNAL',
};

function body(style: 'anthropic' | 'openai' | 'gemini', kind: GatewayErrorKind, status: number, message: string): unknown {
  switch (style) {
    case 'anthropic':
      return { type: 'error', error: { type: ANTHROPIC_TYPE[kind], message } };
    case 'openai':
      return { error: { message, type: OPENAI_TYPE[kind].type, param: null, code: OPENAI_TYPE[kind].code } };
    case 'gemini':
      return { error: { code: status, message, status: GEMINI_STATUS[kind] } };
  }
}

/** The gateway's answer of a kind, in the shape of the provider whose protocol is given (null: no provider known). */
export function gatewayError(protocol: WireProtocol | null, kind: GatewayErrorKind, message: string): GatewayAnswer {
  const headers: OutgoingHttpHeaders = { 'content-type': 'application/json', 'x-tcab-gateway': kind };
  if (kind === 'unauthorized' || kind === 'budget_exceeded') headers['x-should-retry'] = 'false';
  if (protocol === null) {
    const status = STATUS.openai[kind];
    return { status, headers, body: JSON.stringify({ error: { type: kind, message } }) };
  }
  const style = errorStyleOf(protocol);
  const status = STATUS[style][kind];
  return { status, headers, body: JSON.stringify(body(style, kind, status, message)) };
}
