// The dispatcher's and the driver's own diagnostics: one pino JSON line each on stderr (in a driver Pod stdout is
// the event stream, so logs never go there), level from TCAB_LOG_LEVEL. Callers bind what identifies the line
// (component always; runId, harness, identity where known) so `kubectl logs | jq` can filter without parsing text.
// Synchronous writes: a process that logs and then exits (a fatal config error) must not lose the line.
import { pino } from 'pino';
import type { DestinationStream, Logger } from 'pino';
import { z } from 'zod';
import { InvalidInputError } from './errors.ts';

export type { Logger };

export const LogLevel = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);
export type LogLevel = z.infer<typeof LogLevel>;

/** TCAB_LOG_LEVEL, or `info` when unset or empty; anything else is an error naming the variable. */
export function logLevelFrom(env: Readonly<Record<string, string | undefined>>): LogLevel {
  const raw = env.TCAB_LOG_LEVEL;
  if (raw === undefined || raw === '') return 'info';
  const parsed = LogLevel.safeParse(raw);
  if (!parsed.success) throw new InvalidInputError('TCAB_LOG_LEVEL', `must be one of ${LogLevel.options.join(', ')}, got "${raw}"`);
  return parsed.data;
}

export interface LoggerOptions {
  component: string;
  level?: LogLevel;
  /** Fields on every line (runId, harness, identity). */
  bindings?: Record<string, string | number | boolean>;
  /** Where lines go; stderr by default. Tests pass a stream to read them back. */
  destination?: DestinationStream;
}

export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      base: { component: options.component, ...options.bindings },
      // Level names, not numbers, and ISO time: read by people with kubectl logs as often as by machines.
      formatters: { level: (label) => ({ level: label }) },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    options.destination ?? pino.destination({ fd: 2, sync: true }),
  );
}
