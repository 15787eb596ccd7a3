// Server-Sent Events over a fetch body: the joined `data:` lines of each event.

/**
 * Read an SSE byte stream, calling `onEvent(data)` for each event that has data.
 * `onEvent` returning false stops the read and cancels the rest of the body (which
 * closes the connection); an error it throws does the same and propagates.
 * `onBytes()` runs on every chunk received. An aborted `signal` ends the read with an
 * AbortError (the fetch's own abort also errors the body).
 */
export async function readSse(body, onEvent, { signal, onBytes } = {}) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      onBytes?.();
      buffer += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buffer.search(/\r?\n\r?\n/)) >= 0) {
        const data = eventData(buffer.slice(0, cut));
        buffer = buffer.slice(cut).replace(/^\r?\n\r?\n/, "");
        if (data && onEvent(data) === false) {
          reader.cancel().catch(() => {});
          return;
        }
      }
      if (signal?.aborted) throw new DOMException("stopped", "AbortError");
    }
  } catch (error) {
    reader.cancel().catch(() => {});
    throw error;
  } finally {
    reader.releaseLock();
  }
}

/** The data of one SSE event block: its `data:` lines joined with newlines. */
function eventData(block) {
  return block
    .split(/\r?\n/)
    .filter((line) => line.startsWith("data:"))
    .map((line) => line.slice(5).replace(/^ /, ""))
    .join("\n");
}
