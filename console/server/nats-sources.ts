// The NATS half of the console's sources, on nats/console-reader.ts (the one module that speaks NATS).
import type { ConsoleNats } from '../../nats/console-reader.ts';
import type { ActivitySource, FeedSource } from './sources.ts';

export function natsSources(nats: ConsoleNats): { activity: ActivitySource; feed: FeedSource } {
  return {
    activity: { start: (onEvents, onError) => nats.followActivity(onEvents, onError) },
    feed: { open: (runId, afterSeq, handlers) => nats.openRunFeed(runId, afterSeq, handlers) },
  };
}
