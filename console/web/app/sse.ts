// One Server-Sent Events channel per page. EventSource reconnects by itself and sends Last-Event-ID, so the server
// resumes a run's feed right after the last event shown. When the server refuses the stream (EventSource gives up:
// readyState CLOSED; it cannot tell why) the hook asks the session route whether this browser may still read: if
// not (a 401: the session expired or the token rotated) the login shows and this page unmounts, no reconnect loop;
// else it opens a new one after a back-off at `resumeUrl()` (a run page puts ?after= in it).
import { useSignal, type Signal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import { checkAccess } from './session.ts';

export type StreamState = 'connecting' | 'live' | 'reconnecting';
export type StreamHandlers = Record<string, (data: never) => void>;

/** `url` names the stream (a new url = a new stream); `resumeUrl` is where a fresh EventSource resumes it. */
export function useEventStream(url: string, handlers: StreamHandlers, resumeUrl: () => string = () => url): Signal<StreamState> {
  const state = useSignal<StreamState>('connecting');
  const latest = useRef(handlers);
  latest.current = handlers;
  const names = Object.keys(handlers).join(',');
  const resume = useRef(resumeUrl);
  resume.current = resumeUrl;

  useEffect(() => {
    let source: EventSource | undefined;
    let retry: ReturnType<typeof setTimeout> | undefined;
    let delay = 1000;
    let disposed = false;
    const open = () => {
      source = new EventSource(resume.current());
      state.value = state.value === 'connecting' ? 'connecting' : 'reconnecting';
      source.onopen = () => {
        state.value = 'live';
        delay = 1000;
      };
      source.onerror = () => {
        state.value = 'reconnecting';
        if (source?.readyState !== EventSource.CLOSED) return;
        void checkAccess().then((allowed) => {
          if (disposed || allowed === false) return;
          retry = setTimeout(open, delay);
          delay = Math.min(delay * 2, 30_000);
        });
      };
      for (const name of names.split(',')) {
        source.addEventListener(name, (e) => {
          let data: unknown;
          try {
            data = JSON.parse((e as MessageEvent<string>).data);
          } catch {
            return;
          }
          latest.current[name]?.(data as never);
        });
      }
    };
    open();
    return () => {
      disposed = true;
      clearTimeout(retry);
      source?.close();
    };
    // One stream per url (a page, a run); handlers and resumeUrl are read through refs.
  }, [url, names]);
  return state;
}
