// Test helper: runs a recorded harness transcript through the real engine + adapter, like `tcab translate`.
import { readFileSync } from 'node:fs';
import { LineSplitter } from '../../shared/translate/lines.ts';
import { TranslationSession } from '../../shared/translate/session.ts';
import type { HarnessAdapter } from '../../shared/adapter.ts';
import type { HarnessEvent } from '../../shared/events.ts';
import { HarnessEvent as HarnessEventSchema } from '../../shared/events.ts';

export const FIXED_CLOCK = { now: () => new Date('2026-12-02T12:00:00.000Z') };

interface TranslateOptions {
  stderr?: string;
  exitCode?: number;
  workdir?: string;
  /** Report files the session wrote beside its stream (Invocation.reports), by name: their text. */
  reports?: Record<string, string>;
}

export function translateText(adapter: HarnessAdapter, stdout: string, options: TranslateOptions = {}) {
  const session = new TranslationSession(adapter, { workdir: options.workdir }, { clock: FIXED_CLOCK });
  const events: HarnessEvent[] = [];
  const splitter = new LineSplitter();
  for (const l of [...splitter.push(stdout), ...splitter.end()]) events.push(...session.stdout(l));
  if (options.stderr !== undefined) {
    const errSplitter = new LineSplitter();
    for (const l of [...errSplitter.push(options.stderr), ...errSplitter.end()]) events.push(...session.stderr(l));
  }
  const finished = session.finish({ code: options.exitCode ?? 0, signal: null }, options.reports);
  events.push(...finished.events);
  for (const event of events) {
    const parsed = HarnessEventSchema.safeParse(event);
    if (!parsed.success) throw new Error(`event does not match the contract: ${JSON.stringify(event)}: ${parsed.error.message}`);
  }
  return { events, summary: finished.summary };
}

export function translateFixture(adapter: HarnessAdapter, path: string, options: TranslateOptions = {}) {
  return translateText(adapter, readFileSync(path, 'utf8'), options);
}

/** Events without the fields that vary per run, for exact comparisons. */
export function strip(events: HarnessEvent[]): Record<string, unknown>[] {
  return events.map((e) => {
    const { timestamp: _t, session_id: _s, ...rest } = e as HarnessEvent & { session_id?: string };
    return rest;
  });
}
