// A reader that closes early (`tcab translate ... | head`, a pager quit) makes stdout writes fail with EPIPE.
// Like a Unix filter killed by SIGPIPE, tcab then stops quietly instead of crashing with a stack trace.
// A command doing work that must end cleanly (`tcab run`: the harness session and its teardown) installs its
// own reaction for the duration, e.g. cancelling the run.

type Reaction = () => void;

let reaction: Reaction = () => process.exit(0);
let closed = false;

/** Route EPIPE on the stream to the current reaction, once; other stream errors stay fatal. */
export function watchForBrokenPipe(stream: NodeJS.WritableStream = process.stdout): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    if (closed) return;
    closed = true;
    reaction();
  });
}

/** Replace the reaction while `work` runs (e.g. cancel a run and let its teardown finish). */
export function onBrokenPipe(replacement: Reaction): () => void {
  const previous = reaction;
  reaction = replacement;
  if (closed) replacement();
  return () => {
    reaction = previous;
  };
}
