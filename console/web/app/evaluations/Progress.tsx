// An evaluation's progress: runs final of all, as text and as a bar (the text is what a screen reader reads).
import type { Progress } from '../../evaluation-view.ts';

export function ProgressBar({ progress }: { progress: Progress }) {
  const percent = Math.round(progress.fraction * 100);
  return (
    <span class="eval-progress" data-final={progress.final} data-total={progress.total}>
      <span class="bar" role="progressbar" aria-valuemin={0} aria-valuemax={progress.total} aria-valuenow={progress.final} aria-label="Runs final">
        <span class="fill" style={{ width: `${percent}%` }} />
      </span>
      <span class="num">
        {progress.final.toLocaleString('en-US')}/{progress.total.toLocaleString('en-US')}
      </span>
    </span>
  );
}
