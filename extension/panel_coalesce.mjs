// One run at a time, never lost: a call made while a run is going makes exactly one more
// run after it (however many such calls there were) and gets that run's promise. The
// panel's background reads (`thread.sent`, `summary.list`) and summary passes use it, so
// a burst of live-query changes costs at most two runs, and the last one sees them all.

/**
 * `work(key)` run one at a time per key. `states` (key -> `{again, done}`) holds the runs
 * going; a key leaves it when its run ends, so `states.size === 0` means nothing runs.
 */
export function coalescedBy(work, states = new Map()) {
  return (key) => {
    const going = states.get(key);
    if (going) {
      going.again = true;
      return going.done;
    }
    const state = { again: false, done: null };
    states.set(key, state);
    state.done = (async () => {
      try {
        do {
          state.again = false;
          await work(key);
        } while (state.again);
      } finally {
        states.delete(key);
      }
    })();
    return state.done;
  };
}

/** `work()` run one at a time (`coalescedBy` with a single key). */
export function coalesced(work) {
  const run = coalescedBy(() => work());
  return () => run(null);
}
