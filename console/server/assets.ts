// The browser app, built in memory by console/web/bundle.ts (esbuild) once per server. While that module (or
// esbuild) is missing, a placeholder page says so instead of the server failing to start: reads of the streams
// work without it.
import type { ConsoleBundle } from '../web/bundle.ts';

export function placeholderBundle(reason: string): ConsoleBundle {
  const text = `The tcab console's browser app is not available: ${reason}`.replace(/[<&>]/g, (c) => `&#${c.charCodeAt(0)};`);
  return { js: '', css: '', chunks: {}, html: `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>tcab console</title></head><body><p>${text}</p></body></html>\n` };
}

/** Starts the build at once (the first page load need not wait ~100 ms more); never rejects. */
export function loadBundle(): Promise<ConsoleBundle> {
  return import('../web/bundle.ts')
    .then((m) => m.buildConsoleBundle())
    .catch((error: unknown) => placeholderBundle(error instanceof Error ? error.message : String(error)));
}
