// Wires beyond Anthropic's, each a small module: OpenAI Responses (Codex), OpenAI Chat Completions (OpenCode,
// Kilo, Qwen, Cline, Copilot/Droid BYOK), Gemini generateContent. Each maps a request to a step and renders it.
import type { StubScript } from '../../shared/stub-script.ts';

export interface WireRequest {
  script: StubScript;
  body: Record<string, unknown>;
  headers: Record<string, string>;
  path: string;
  query: URLSearchParams;
}

export interface WireAnswer {
  status: number;
  contentType: string;
  body: string;
  /** More response headers (retry-after of a scripted throttle). */
  headers?: Record<string, string>;
}

export interface Wire {
  name: string;
  matches(method: string, path: string): boolean;
  answer(request: WireRequest): WireAnswer;
}


