// Attachment summaries, carried out for the open provider connection. Python decides
// everything (which attachments qualify, whether one is claimed, the prompt); the panel
// only asks: `summary.candidates` -> `summary.claim` -> one reply without streaming ->
// `summary.store` (or `summary.fail`). It runs in the background: a turn never waits for
// it. A failed summary is tried again only when the user asks ("Summarize again").
import { cmd, q, hasQuery, live } from "./panel_store.mjs";
import { completeChat } from "./panel_provider.mjs";

/** How long a summary's provider call may take. */
export const SUMMARY_TIMEOUT_MS = 120_000;

export class Summaries {
  /** `chat`: the conversation view (its provider; `changed()` redraws the open thread). */
  constructor(chat) {
    this.chat = chat;
    this.running = new Map(); // threadId -> {again: bool}: one pass at a time per thread
    this.byOriginal = new Map(); // of the open thread: originalId -> [summary.list rows]
    this.watching = null; // {threadId, stop}
    // Finished passes, and those that asked for candidates (the connection had summaries
    // on): a test waits for these to know a pass it caused has run.
    this.passes = 0;
    this.asked = 0;
  }

  /** Whether the open connection makes summaries (its `summaries` setting) and the runtime can. */
  async enabled(provider = this.chat.provider) {
    return !!provider && provider.summaries !== false && (await hasQuery("summary.candidates"));
  }

  /**
   * Summarize what `threadId` still needs, in the background (the promise is for tests
   * and never awaited by a turn). A call while a pass runs makes one more pass after it.
   */
  schedule(threadId) {
    const running = this.running.get(threadId);
    if (running) {
      running.again = true;
      return running.done;
    }
    const state = { again: false };
    state.done = (async () => {
      try {
        do {
          state.again = false;
          await this.pass(threadId).finally(() => (this.passes += 1));
        } while (state.again);
      } catch (error) {
        console.warn("summaries failed", error);
      } finally {
        this.running.delete(threadId);
      }
    })();
    this.running.set(threadId, state);
    return state.done;
  }

  /** One pass: each candidate claimed, summarized and stored, one after the other. */
  async pass(threadId) {
    const provider = this.chat.provider;
    if (!(await this.enabled(provider))) return;
    const args = { threadId, model: provider.model };
    if (Number.isInteger(provider.summaryThreshold)) args.threshold = provider.summaryThreshold;
    const { attachments } = await q("summary.candidates", args);
    this.asked += 1;
    for (const a of attachments) await this.summarize(provider, a.attachmentId, false);
  }

  /**
   * Claim `attachmentId`'s summary for the provider's model and make it. `again`: an
   * explicit request after a failure. Resolves to what happened: "stored", "failed" or
   * the claim's reason for not claiming.
   */
  async summarize(provider, attachmentId, again) {
    const model = provider.model;
    const claim = await cmd("summary.claim", { attachmentId, model, again });
    if (!claim.claimed) return claim.reason;
    let text;
    try {
      ({ text } = await completeChat({
        baseUrl: provider.baseUrl,
        apiKey: await provider.apiKey(),
        model,
        messages: claim.messages,
        timeoutMs: SUMMARY_TIMEOUT_MS,
      }));
    } catch (error) {
      const said = String(error?.message ?? error).slice(0, 300);
      await cmd("summary.fail", { attachmentId, model, error: said }).catch((e) => console.warn("summary.fail failed", e));
      return "failed";
    }
    try {
      await cmd("summary.store", { attachmentId, model, text });
    } catch (error) {
      // Gone meanwhile (evicted, its thread deleted): nothing to keep.
      console.warn("summary.store failed", error);
      return "failed";
    }
    return "stored";
  }

  /** "Summarize again": the user's explicit retry of a failed summary. */
  async again(attachmentId) {
    const provider = this.chat.provider;
    if (!provider) return "no-provider";
    return this.summarize(provider, attachmentId, true);
  }

  /**
   * Follow `threadId`'s summaries live (`summary.list`), for the chips; then summarize
   * what the thread still needs. A runtime without summaries shows none.
   */
  async watch(threadId) {
    this.unwatch();
    const turn = (this.turn = {}); // a later call wins
    if (!(await hasQuery("summary.list")) || this.chat.threadId !== threadId || this.turn !== turn) return;
    const state = { threadId, stop: null };
    state.stop = live(
      "summary.list",
      { threadId },
      ({ summaries }) => {
        if (this.watching !== state) return;
        const by = new Map();
        for (const s of summaries ?? []) {
          if (!by.has(s.attachmentId)) by.set(s.attachmentId, []);
          by.get(s.attachmentId).push(s);
        }
        this.byOriginal = by;
        this.chat.render();
      },
      (error) => console.warn("summary.list failed", error),
    );
    this.watching = state;
    this.schedule(threadId);
  }

  unwatch() {
    this.turn = null;
    this.watching?.stop?.();
    this.watching = null;
    this.byOriginal = new Map();
  }

  /**
   * What the chip of `attachmentId` shows: `{state, summaryId, error?}` of the summary
   * for the provider's model, else of the first done one, else null.
   */
  of(attachmentId) {
    const rows = this.byOriginal.get(attachmentId);
    if (!rows?.length) return null;
    const model = this.chat.provider?.model;
    return rows.find((r) => r.model === model) ?? rows.find((r) => r.state === "done") ?? rows[0];
  }
}
