// The panel's only way to storage: window.panelot.send, .query and .live.
import { explainError } from "./panel_errors.mjs";

export const CLIENT_ID = "sidepanel";

/** An error from a failed command or query, keeping the runtime's name and field. */
export class StoreError extends Error {
  constructor({ name, message, field } = {}) {
    super(message ?? String(name ?? "error"));
    this.name = name ?? "Error";
    this.field = field;
  }
}

/**
 * What to tell the user about a failed command, as one plain sentence: the `text` of
 * explainError (panel_errors.mjs), which also gives the technical `detail`.
 */
export function describeError(error) {
  return explainError(error).text;
}

/**
 * Run a command; resolve with its response, or throw a StoreError. `submissionId`: the
 * command's id, fixed by the caller when a repeat must be answered from its receipt.
 */
export async function cmd(type, payload, submissionId = crypto.randomUUID()) {
  const envelope = await window.panelot.send({ type, clientId: CLIENT_ID, submissionId, payload });
  if (envelope.status === "failed") throw new StoreError(envelope.error);
  return envelope.response;
}

/** Run a named query; resolve with its result, or throw a StoreError. */
export async function q(name, args = {}) {
  try {
    return await window.panelot.query(name, args);
  } catch (error) {
    throw error instanceof Error ? error : new StoreError(error);
  }
}

/**
 * Run a named query live (window.panelot.live): `onResult(result)` now and after each
 * committed change, from any context, that alters it; `onError(StoreError)` for a
 * failed run (it stays live). Returns the function that stops it.
 */
export function live(name, args, onResult, onError = (error) => console.warn(name, error)) {
  return window.panelot.live(name, args, onResult, (error) =>
    onError(error instanceof Error ? error : new StoreError(error)),
  );
}

/** Whether the runtime knows a command/query (probed once, by name, from the error). */
const known = new Map();
export async function hasQuery(name) {
  if (!known.has(name)) {
    try {
      await window.panelot.query(name, {});
      known.set(name, true);
    } catch (error) {
      known.set(name, error?.name !== "UnknownCommandError");
    }
  }
  return known.get(name);
}

/**
 * Count `shown` for the threads without counts that hold (records written before it
 * existed, leaves moved by Dexie code), in the background: a batch per call, a pause
 * between calls. The list shows each count as its live query delivers the change. Stops
 * when none remain, when a call counts nothing (those left were skipped: the next panel
 * tries again), or on an error (logged). See docs/tree.md.
 */
export async function countShown({ limit = 20, pauseMs = 250 } = {}) {
  try {
    for (;;) {
      const { counted, remaining } = await cmd("thread.count_shown", { limit });
      if (remaining === 0 || counted === 0) return;
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  } catch (error) {
    console.warn("thread.count_shown", error);
  }
}
