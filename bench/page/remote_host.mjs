// An experiment (bench/offscreen.py): the store's runtime in a long-lived page (the
// extension's offscreen document), serving the panels' `window.panelot` calls made
// through remote_runtime.mjs over a BroadcastChannel. Not the product.
import { bootRuntime } from "../runtime.mjs";
import { CHANNEL } from "./remote_runtime.mjs";

// An offscreen document has no chrome.storage: the experiment accepts settings kept in
// memory (a real host would route them through the service worker; docs/performance.md).
const panelot = bootRuntime({ memorySettings: true });
const channel = new BroadcastChannel(CHANNEL);
const lives = new Map();

channel.onmessage = async ({ data }) => {
  const { from, id, op } = data;
  if (from === undefined || data.to !== undefined) return;
  const reply = (ok, value) =>
    channel.postMessage(ok ? { to: from, id, ok, result: value } : { to: from, id, ok, error: value });
  try {
    if (op === "ping") {
      await panelot.ready;
      reply(true, null);
    } else if (op === "memory") {
      // The wasm heap the host holds for as long as it lives. (Its JS heap is not told
      // apart: the host shares the extension's renderer process with the panels.)
      reply(true, { wasm: panelot.py._module.HEAP8.buffer.byteLength });
    } else if (op === "query") {
      reply(true, await panelot.query(data.name, data.args));
    } else if (op === "send") {
      reply(true, await panelot.send(data.command));
    } else if (op === "revealSecret") {
      reply(true, await panelot.revealSecret(data.ref));
    } else if (op === "live") {
      const key = `${from}:${data.live}`;
      const post = (ok, value) =>
        channel.postMessage(
          ok ? { to: from, live: data.live, ok, result: value } : { to: from, live: data.live, ok, error: value },
        );
      lives.set(key, panelot.live(data.name, data.args, (r) => post(true, r), (e) => post(false, e)));
    } else if (op === "unlive") {
      lives.get(`${from}:${data.live}`)?.();
      lives.delete(`${from}:${data.live}`);
    } else if (op === "bye") {
      for (const [key, stop] of lives) {
        if (key.startsWith(`${from}:`)) {
          stop();
          lives.delete(key);
        }
      }
    }
  } catch (error) {
    reply(false, error instanceof Error ? { name: error.name, message: error.message } : error);
  }
};
