// Runs `fn` over items with at most `limit` in flight; resolves when all are done (rejects on the first failure).
export async function concurrently<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  const queue = [...items];
  const worker = async () => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) await fn(item);
  };
  await Promise.all(Array.from({ length: Math.min(limit, queue.length) }, worker));
}
