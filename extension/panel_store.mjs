// The panel's only way to storage: window.panelot.send and window.panelot.query.

export const CLIENT_ID = "sidepanel";

/** An error from a failed command or query, keeping the runtime's name and field. */
export class StoreError extends Error {
  constructor({ name, message, field } = {}) {
    super(message ?? String(name ?? "error"));
    this.name = name ?? "Error";
    this.field = field;
  }
}

/** What to tell the user about a failed command: a full storage says what to do about it. */
export function describeError(error) {
  if (error?.name === "QuotaExceededError") {
    return "Storage is full, so nothing was saved. Free space (Settings → Clean up attachments, or delete old conversations), then retry.";
  }
  return error?.message ?? String(error);
}

/** Run a command; resolve with its response, or throw a StoreError. */
export async function cmd(type, payload) {
  const envelope = await window.panelot.send({
    type,
    clientId: CLIENT_ID,
    submissionId: crypto.randomUUID(),
    payload,
  });
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
