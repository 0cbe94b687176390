// The page's clock: the browser's time corrected by the offset to the server's (measured from each snapshot's
// serverTime), ticking once a second so idle times and durations count up without any request.
import { computed, signal } from '@preact/signals';

const local = signal(Date.now());
const offsetMs = signal(0);
setInterval(() => (local.value = Date.now()), 1000);

/** The server's "now" in ms, re-evaluated every second. */
export const serverNow = computed(() => local.value + offsetMs.value);

export function syncServerTime(serverTime: string): void {
  const ms = Date.parse(serverTime);
  if (!Number.isNaN(ms)) offsetMs.value = ms - Date.now();
  local.value = Date.now();
}
