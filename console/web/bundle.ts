// Builds the console's browser app in memory when the server starts (esbuild, ~100 ms): no dist folder and no build
// step anyone has to remember; the server keeps the three strings and serves them.
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { build, stop } from 'esbuild';

export interface ConsoleBundle {
  js: string;
  css: string;
  html: string;
  /**
   * Code the app imports on demand, by file name (served under CONSOLE_PATHS.chunks): the evaluation page's plot
   * library, so the runs page never loads it. Names carry a content hash, and so the app.js that imports them.
   */
  chunks: Record<string, string>;
}

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

/** A short content hash in the asset URLs: a new dispatcher version is never served a cached old app. */
const version = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 12);

/** Builds in flight: esbuild's service process (~20 MB) is stopped once the last one is done, not kept for the server's life. */
let building = 0;

export async function buildConsoleBundle(options: { minify?: boolean } = {}): Promise<ConsoleBundle> {
  building++;
  try {
    return await buildOnce(options.minify ?? true);
  } finally {
    if (--building === 0) await stop();
  }
}

async function buildOnce(minify: boolean): Promise<ConsoleBundle> {
  const result = await build({
    entryPoints: { app: here('./app/main.tsx'), styles: here('./app/styles.css') },
    bundle: true,
    write: false,
    outdir: '/console',
    format: 'esm',
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    platform: 'browser',
    target: ['chrome115', 'firefox115', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify,
    legalComments: 'none',
    logLevel: 'silent',
    charset: 'utf8',
  });
  const js = result.outputFiles.find((f) => f.path === '/console/app.js')?.text;
  const css = result.outputFiles.find((f) => f.path.endsWith('.css'))?.text;
  if (js === undefined || css === undefined) throw new Error('console bundle: esbuild produced no app.js or app.css');
  const chunks = Object.fromEntries(result.outputFiles.filter((f) => f.path.startsWith('/console/chunks/') && f.path.endsWith('.js')).map((f) => [f.path.slice('/console/chunks/'.length), f.text]));
  return { js, css, html: consoleHtml(version(js), version(css)), chunks };
}

/** The one page every console route serves; the app reads location.pathname to pick the page. */
function consoleHtml(jsVersion: string, cssVersion: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>tcab console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/console/app.css?v=${cssVersion}">
<script type="module" src="/console/app.js?v=${jsVersion}"></script>
</head>
<body>
<noscript>The tcab console needs JavaScript.</noscript>
<div id="app"></div>
</body>
</html>
`;
}
