// An experiment (bench/offscreen.py): the side panel's `window.panelot` served by a
// runtime that lives in another page of the extension (bench/page/remote_host.mjs, run as
// the offscreen document), over a BroadcastChannel. It has the interface of
// web/runtime.mjs's bootRuntime that the panel uses (ready, query, send, live,
// revealSecret, marks); it is not the product: see docs/performance.md, start-up.
export const STAGES = ["runtime", "package", "database", "ready"];

/** The channel the host answers on (remote_host.mjs). */
export const CHANNEL = "panelot-remote";

const PING_EVERY_MS = 50;

export function bootRuntime({ onProgress = () => {} } = {}) {
  const channel = new BroadcastChannel(CHANNEL);
  const me = crypto.randomUUID();
  let next = 0;
  const pending = new Map();
  const lives = new Map();
  channel.onmessage = ({ data }) => {
    if (data.to !== me) return;
    if (data.live !== undefined) {
      const handlers = lives.get(data.live);
      if (handlers) (data.ok ? handlers.onResult : handlers.onError)(data.ok ? data.result : data.error);
      return;
    }
    const waiting = pending.get(data.id);
    if (!waiting) return;
    pending.delete(data.id);
    if (data.ok) waiting.resolve(data.result);
    else waiting.reject(data.error);
  };
  const call = (op, body) =>
    new Promise((resolve, reject) => {
      const id = next++;
      pending.set(id, { resolve, reject });
      channel.postMessage({ from: me, id, op, ...body });
    });
  addEventListener("pagehide", () => channel.postMessage({ from: me, op: "bye" }));

  const panelot = {
    ready: null,
    py: null,
    state: "starting",
    timings: {},
    marks: {},
    snapshot: "remote",
    error: null,
    backup: null,
    mark(name) {
      panelot.marks[name] = Math.round(performance.now() * 10) / 10;
    },
    async query(name, args = {}) {
      await panelot.ready;
      return call("query", { name, args });
    },
    async send(command) {
      await panelot.ready;
      return call("send", { command });
    },
    live(name, args = {}, onResult = () => {}, onError = (error) => console.error(error)) {
      const live = next++;
      lives.set(live, { onResult, onError });
      panelot.ready.then(() => {
        if (lives.has(live)) channel.postMessage({ from: me, op: "live", live, name, args });
      });
      return () => {
        if (lives.delete(live)) channel.postMessage({ from: me, op: "unlive", live });
      };
    },
    /** The host's wasm heap, in bytes: `{wasm}` (the experiment's own question). */
    async hostMemory() {
      await panelot.ready;
      return call("memory", {});
    },
    async revealSecret(ref) {
      await panelot.ready;
      return call("revealSecret", { ref: String(ref) });
    },
  };
  const enter = (stage) => {
    panelot.state = stage;
    window.__panelotState = stage;
    onProgress(stage);
  };
  const started = performance.now();
  panelot.ready = (async () => {
    enter("database");
    // The host answers once its store is ready; a ping sent before it listens is lost.
    await new Promise((resolve) => {
      const id = next++;
      pending.set(id, { resolve, reject: resolve });
      const ping = () => {
        if (!pending.has(id)) return;
        channel.postMessage({ from: me, id, op: "ping" });
        setTimeout(ping, PING_EVERY_MS);
      };
      ping();
    });
    panelot.mark("database");
    panelot.timings.total_ms = Math.round(performance.now() - started);
    enter("ready");
  })();
  window.panelot = panelot;
  return panelot;
}
