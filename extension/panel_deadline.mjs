// The time limits of one provider request, enforced by aborting its fetch: a limit on
// the wait for the reply's first bytes (ended by `arrived()`), and one on the whole
// request. The caller's own signal (the user's Stop) aborts the request too.

/** setTimeout fires at once for delays above this, so longer limits are refused. */
const MAX_DELAY_MS = 2 ** 31 - 1;

function checkLimit(name, ms) {
  if (!(typeof ms === "number" && ms > 0 && ms <= MAX_DELAY_MS)) {
    throw new RangeError(`${name} must be a number of milliseconds from 1 to ${MAX_DELAY_MS}, not ${ms}`);
  }
}

/** A limit in words: 30000 → "30 s", 400 → "0.4 s", 600000 → "10 min". */
export function formatDuration(ms) {
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000} min`;
  return `${Number((ms / 1000).toFixed(1))} s`;
}

/**
 * An AbortController for one request, aborted by `signal`, by `firstByteMs` passing
 * before `arrived()` is called, or by `totalMs` passing before `done()`. `expired`
 * names the limit that fired ("timeout-first-byte" or "timeout-total", else null) and
 * `limitMs` its length; a limit never fires after the request was aborted otherwise.
 */
export function requestDeadline({ signal, firstByteMs, totalMs }) {
  checkLimit("firstByteTimeoutMs", firstByteMs);
  checkLimit("totalTimeoutMs", totalMs);
  const controller = new AbortController();
  const state = { expired: null, limitMs: null };
  const expire = (kind, ms) => () => {
    if (controller.signal.aborted) return;
    Object.assign(state, { expired: kind, limitMs: ms });
    controller.abort(new DOMException(`${kind} after ${ms} ms`, "TimeoutError"));
  };
  const first = setTimeout(expire("timeout-first-byte", firstByteMs), firstByteMs);
  const total = setTimeout(expire("timeout-total", totalMs), totalMs);
  const stop = () => controller.abort(signal.reason);
  signal?.addEventListener("abort", stop, { once: true });
  if (signal?.aborted) stop();
  return {
    signal: controller.signal,
    get expired() {
      return state.expired;
    },
    get limitMs() {
      return state.limitMs;
    },
    arrived: () => clearTimeout(first),
    done: () => {
      clearTimeout(first);
      clearTimeout(total);
      signal?.removeEventListener("abort", stop);
    },
  };
}
