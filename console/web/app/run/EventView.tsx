// One feed event, rendered for what it is. The wrapper carries the deep-link anchor (#seq-<n>) and the test hooks.
import type { FeedItem } from '../../../../shared/console.ts';
import type { EventOf, HarnessEvent } from '../../../../shared/events.ts';
import { formatOffset, lineRange } from '../../format.ts';

const LABEL: Record<HarnessEvent['type'], string> = {
  agent: 'agent',
  reasoning: 'thinking',
  command: 'command',
  read: 'read',
  write: 'write',
  search: 'search',
  list: 'list',
  skill: 'skill',
  orchestration: 'subagent',
  error: 'error',
  warning: 'warning',
  system: 'system',
  unknown: 'unknown',
};

export interface EventViewProps {
  item: FeedItem;
  index: number;
  count: number;
  startMs: number | undefined;
  highlighted: boolean;
  open: boolean;
  onToggle: (seq: number, open: boolean) => void;
}

export function EventView({ item, index, count, startMs, highlighted, open, onToggle }: EventViewProps) {
  const e = item.event;
  return (
    <article
      id={`seq-${item.seq}`}
      class={`ev ev-${e.type}${highlighted ? ' highlighted' : ''}${item.invalid ? ' invalid' : ''}`}
      data-seq={item.seq}
      data-type={e.type}
      data-index={index}
      aria-posinset={index + 1}
      aria-setsize={count}
      aria-labelledby={`seq-${item.seq}-h`}
      tabIndex={-1}
    >
      <div class="ev-meta">
        <a class="ev-seq" href={`#seq-${item.seq}`} aria-label={`Link to event ${item.seq}`}>
          #{item.seq}
        </a>
        <time dateTime={e.timestamp} title={e.timestamp}>
          {formatOffset(e.timestamp, startMs)}
        </time>
        <span id={`seq-${item.seq}-h`} class={`ev-type t-${e.type}`}>
          {LABEL[e.type]}
        </span>
        {success(e)}
      </div>
      <div class="ev-body">
        <Body event={e} seq={item.seq} open={open} onToggle={onToggle} />
        {item.invalid && <p class="invalid-note">Shown as raw output: {item.invalid}</p>}
      </div>
    </article>
  );
}

/** The outcome of a tool call, in words and a symbol (never colour alone). */
function success(e: HarnessEvent) {
  const ok = 'is_success' in e ? e.is_success : undefined;
  const code = e.type === 'command' ? e.exit_code : undefined;
  if (ok === undefined && code === undefined) return null;
  const failed = ok === false || (code !== undefined && code !== 0);
  return (
    <span class={`ev-result ${failed ? 'fail' : 'ok'}`}>
      {failed ? '✗ failed' : '✓ ok'}
      {code !== undefined && ` · exit ${code}`}
    </span>
  );
}

function Body({ event: e, seq, open, onToggle }: { event: HarnessEvent; seq: number; open: boolean; onToggle: EventViewProps['onToggle'] }) {
  switch (e.type) {
    case 'agent':
      return <p class="text">{e.message}</p>;
    case 'reasoning':
      return (
        <details open={open} onToggle={(ev) => onToggle(seq, ev.currentTarget.open)}>
          <summary>
            Reasoning <span class="muted">({e.message.length.toLocaleString('en-US')} characters)</span>
          </summary>
          <p class="text">{e.message}</p>
        </details>
      );
    case 'command':
      return (
        <>
          <pre class="cmd">
            <code>{e.command}</code>
          </pre>
          {(e.working_directory || e.tool_name) && <p class="muted small">{[e.working_directory && `in ${e.working_directory}`, e.tool_name && `tool ${e.tool_name}`].filter(Boolean).join(' · ')}</p>}
        </>
      );
    case 'read':
    case 'write':
      return <FileOp event={e} />;
    case 'skill':
      return (
        <p>
          {e.skill_name ? <strong>{e.skill_name}</strong> : 'skill'} <code>{e.path + lineRange(e.start_line, e.end_line)}</code>
        </p>
      );
    case 'search':
      return (
        <p>
          <code>{e.query}</code>
          {e.path && (
            <>
              {' in '}
              <code>{e.path}</code>
            </>
          )}
          {e.tool_name && <span class="muted small"> · tool {e.tool_name}</span>}
        </p>
      );
    case 'list':
      return (
        <p>
          <code>{e.path ?? '.'}</code>
          {e.tool_name && <span class="muted small"> · tool {e.tool_name}</span>}
        </p>
      );
    case 'orchestration':
      return <Subagent event={e} />;
    case 'warning':
    case 'error':
      return (
        <>
          {e.code && <p class="small">code {e.code}</p>}
          <pre class="output">{e.message}</pre>
        </>
      );
    case 'system':
      return (
        <p>
          <strong>{e.stage.replace(/_/g, ' ')}</strong> <span class={`st st-${e.status}`}>{e.status}</span>
          {e.message && <span class="muted"> — {e.message}</span>}
        </p>
      );
    case 'unknown':
      return (
        <>
          <pre class="output raw">{typeof e.raw === 'string' ? e.raw : JSON.stringify(e.raw, null, 2)}</pre>
          {e.original_bytes !== undefined && <p class="muted small">cut from {e.original_bytes.toLocaleString('en-US')} bytes</p>}
        </>
      );
  }
}

function FileOp({ event: e }: { event: EventOf<'read'> | EventOf<'write'> }) {
  const range = lineRange(e.start_line, e.end_line);
  return (
    <p>
      <code>
        {e.path}
        {range && <span class="range">{range}</span>}
      </code>
      {range && <span class="muted small"> · lines {range.slice(1)}</span>}
      {e.tool_name && <span class="muted small"> · tool {e.tool_name}</span>}
    </p>
  );
}

const ACTION: Record<EventOf<'orchestration'>['action'], string> = {
  subagent_started: 'started',
  subagent_completed: 'finished',
  subagent_failed: 'failed',
};

function Subagent({ event: e }: { event: EventOf<'orchestration'> }) {
  return (
    <p>
      Subagent <strong>{e.subagent_name ?? e.subagent_id ?? '(unnamed)'}</strong> {ACTION[e.action]}
      {e.subagent_id && e.subagent_name && <span class="muted small"> · id {e.subagent_id}</span>}
    </p>
  );
}
