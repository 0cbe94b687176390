// The console bench's part (a): event published on NATS -> rendered in the run page, at a steady rate for one run.
// Messages are the driver's own (eventEnvelope and messageHeaders: the same subjects, headers and message ids, on
// the stream ensureRunStream makes), published with JetStream acks, whose stream sequence the page shows as data-seq;
// the console server reads the run through its real NATS feed; the page is the real app in real Chromium.
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { messageHeaders } from '../nats/publisher.ts';
import { eventEnvelope } from '../nats/envelope.ts';
import { connectNats, natsSettings } from '../nats/settings.ts';
import { ensureRunStream } from '../nats/stream.ts';
import type { ConsoleSources } from '../console/server/sources.ts';
import { NatsServer } from '../test/support/nats-server.ts';
import { launchBrowser } from '../test/support/browser.ts';
import type { HarnessEvent } from '../shared/events.ts';
import { PROBE_SCRIPT, READ_PROBE, percentiles, reachedLatencies } from './console-probe.ts';
import type { ProbeRow, ProbeState } from './console-probe.ts';
import { memorySources } from './console-sources.ts';
import { collectGarbage, mb, pageMetrics, rendererMemory } from './console-metrics.ts';

/** A console server the feed bench measures (bench/console.ts starts one as the dispatcher mounts it). */
export interface ConsoleServer {
  url: string;
  close(): Promise<void>;
}

export interface FeedBenchOptions {
  rate: number;
  seconds: number;
  /** Events of the first seconds are published and rendered but left out of the figures (JIT, first layouts). */
  warmupSeconds: number;
  startConsoleServer(sources: ConsoleSources): Promise<ConsoleServer>;
  /** The console's NATS sources (activity + feed) on the given server. */
  natsSources(servers: string): Promise<Pick<ConsoleSources, 'activity' | 'feed'> & { close(): Promise<void> }>;
}

const NAMESPACE = 'bench';
const NAME = 'feed-run';
const RUN_ID = `${NAMESPACE}_${NAME}`;

const now = () => performance.timeOrigin + performance.now();
const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

export async function benchFeedLatency(options: FeedBenchOptions, log: (m: string) => void) {
  const nats = await NatsServer.start();
  const nc = await connectNats(natsSettings(nats.url), { name: 'tcab-bench-publisher' });
  const js = jetstream(nc);
  const browser = await launchBrowser();
  let close: (() => Promise<void>)[] = [];
  try {
    await ensureRunStream(await jetstreamManager(nc));
    // One Running Run the rows source knows (the run page shows a Run it can find), among no others.
    const sources = memorySources(0, NAMESPACE);
    sources.upsert({ metadata: { namespace: NAMESPACE, name: NAME, uid: '00000000-0000-4000-8000-feedfeedfeed', creationTimestamp: new Date().toISOString() }, spec: { harness: 'gg', model: 'claude-sonnet-4-5' }, status: { phase: 'Running', startTime: new Date().toISOString() } });
    const nsrc = await options.natsSources(nats.url);
    const server = await options.startConsoleServer({ ...sources, ...nsrc });
    close = [() => server.close(), () => nsrc.close()];

    const { page, errors } = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    await page.addInitScript(PROBE_SCRIPT);
    await page.goto(`${server.url}/runs/${NAMESPACE}/${NAME}`);
    await page.waitForSelector('[data-caught-up="true"]', { timeout: 60_000 });

    // Publish on a schedule (event i due at start + i/rate s), not awaiting each ack.
    const total = Math.round(options.rate * options.seconds);
    const publishedAt = new Map<number, number>();
    const acks: Promise<void>[] = [];
    const start = now();
    let behind = 0;
    for (let i = 1; i <= total; ) {
      const due = start + ((i - 1) * 1000) / options.rate;
      if (now() < due) {
        await tick();
        continue;
      }
      behind = Math.max(behind, now() - due);
      const t = now();
      const event: HarnessEvent = { type: 'agent', timestamp: new Date(t).toISOString(), message: `bench event ${i} published_at=${t.toFixed(3)}` };
      const seq = i;
      const envelope = eventEnvelope(RUN_ID, undefined, seq, event);
      acks.push(js.publish(envelope.subject, JSON.stringify(event), { msgID: envelope.msgId, headers: messageHeaders(envelope) }).then((ack) => void publishedAt.set(ack.seq, t)));
      i += 1;
    }
    await Promise.all(acks);
    const lastSeq = Math.max(...publishedAt.keys());
    const times = [...publishedAt.values()];
    const achievedRate = (times.length - 1) / ((Math.max(...times) - Math.min(...times)) / 1000);
    // Every event reached the page when the newest one (or nothing after it) has an element.
    await page.waitForSelector(`[data-seq="${lastSeq}"]`, { timeout: 60_000, state: 'attached' });
    const probe = (await page.evaluate(READ_PROBE)) as ProbeState;
    await collectGarbage(page);
    const metrics = await pageMetrics(page);
    const renderers = await rendererMemory(browser);
    const warmupEnd = start + options.warmupSeconds * 1000;
    const measured = new Map([...publishedAt].filter(([, t]) => t >= warmupEnd));
    const inWindow = (r: ProbeRow) => measured.has(r.seq);
    // The event's own publish time (its text), or the ack map's when the row did not render the text.
    const sentAt = (r: ProbeRow) => r.publishedAt ?? measured.get(r.seq)!;
    const rendered = probe.seen.filter(inWindow);
    const figures = {
      rate_per_s: options.rate,
      seconds: options.seconds,
      warmup_seconds: options.warmupSeconds,
      published: publishedAt.size,
      measured: measured.size,
      achieved_rate_per_s: Math.round(achievedRate),
      publisher_max_behind_ms: +behind.toFixed(1),
      /** Rendered events whose publish time was read from their own text in the page (the rest: the ack map's). */
      publish_time_from_event_text: rendered.filter((r) => r.publishedAt !== undefined).length,
      /** Elements that entered the DOM, per measured event: < 1 when the virtualised feed scrolled past some. */
      rendered_share: +(rendered.length / measured.size).toFixed(3),
      /** publish -> its [data-seq] element in the DOM (the events that got one). */
      dom: percentiles(rendered.map((r) => r.domAt - sentAt(r))),
      /** publish -> the animation frame after its element entered the DOM (the frame that paints it). */
      frame: percentiles(rendered.filter((r) => r.frameAt !== undefined).map((r) => r.frameAt! - sentAt(r))),
      /** publish -> the page showing it or a later event (every measured event counts). */
      reached: percentiles(reachedLatencies(measured, probe.seen, (r) => r.domAt)),
      /** The run page holding all the events, after a forced GC. */
      page_after: { events: publishedAt.size, js_heap_used_mb: mb(metrics.JSHeapUsedSize), dom_nodes: metrics.Nodes, renderer: renderers[0] },
      page_errors: errors,
    };
    log(`event -> render: ${JSON.stringify(figures)}`);
    return figures;
  } finally {
    for (const c of close) await c().catch(() => undefined);
    await browser.close();
    await nc.close();
    await nats.dispose();
  }
}
