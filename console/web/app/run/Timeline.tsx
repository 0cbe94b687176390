// The system stages as a timeline: an ordered list (read in order by a screen reader) whose bars are proportional
// to each stage's duration; the state is written out, not only coloured.
import type { StageSpan } from '../../stages.ts';
import { formatDuration } from '../../format.ts';

export function Timeline({ spans }: { spans: StageSpan[] }) {
  const longest = Math.max(1, ...spans.map((s) => s.durationMs ?? 0));
  return (
    <ol class="timeline" aria-label="Stages">
      {spans.map((s) => (
        <li key={s.stage} class={`stage st-${s.state}`} data-stage={s.stage} data-state={s.state} title={s.message}>
          <span class="stage-name">{s.label}</span>
          <span class="stage-bar" aria-hidden="true">
            <span style={{ width: `${s.durationMs === undefined ? 0 : Math.max(2, (s.durationMs / longest) * 100)}%` }} />
          </span>
          <span class="stage-state">{s.state}</span>
          <span class="stage-dur">{s.durationMs === undefined ? '' : formatDuration(s.durationMs)}</span>
        </li>
      ))}
    </ol>
  );
}
