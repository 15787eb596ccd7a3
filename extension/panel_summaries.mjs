// Attachment summaries, carried out for the open provider connection. Python decides
// everything (which attachments qualify, whether one is claimed, the prompt); the panel
// only asks: `summary.candidates` -> `summary.claim` -> one reply without streaming ->
// `summary.store` (or `summary.fail`). It runs in the background: a turn never waits for
// it. A failed summary is tried again only when the user asks ("Summarize again").
import { cmd, q, hasQuery } from "./panel_store.mjs";
import { coalesced, coalescedBy } from "./panel_coalesce.mjs";
import { completeChat } from "./panel_provider.mjs";

/** How long a summary's provider call may take. */
export const SUMMARY_TIMEOUT_MS = 120_000;

export class Summaries {
  /** `chat`: the conversation view (its provider; `changed()` redraws the open thread). */
  constructor(chat) {
    this.chat = chat;
    this.running = new Map(); // threadId -> {again, done}: one pass at a time per thread
    this.passing = coalescedBy((threadId) => this.pass(threadId).finally(() => (this.passes += 1)), this.running);
    this.byOriginal = new Map(); // of the open thread: originalId -> [summary.list rows]
    this.reading = coalesced(() => this.read());
    this.readKey = null; // what was last drawn
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
    return this.passing(threadId).catch((error) => console.warn("summaries failed", error));
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
    this.refresh(); // "Summarizing…"
    try {
      return await this.make(provider, attachmentId, claim.messages);
    } finally {
      this.refresh();
    }
  }

  /** The provider call of a claimed summary, then `summary.store` or `summary.fail`. */
  async make(provider, attachmentId, messages) {
    const model = provider.model;
    let text;
    try {
      ({ text } = await completeChat({
        baseUrl: provider.baseUrl,
        apiKey: await provider.apiKey(),
        model,
        messages,
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
   * Read the open thread's summaries again (`summary.list`), for the chips: the
   * conversation's own live results call this, and so does each summary this panel
   * makes. Calls made while one runs make one more run after it.
   */
  refresh() {
    return this.reading();
  }

  async read() {
    const threadId = this.chat.threadId;
    if (!threadId || !(await hasQuery("summary.list"))) return;
    let summaries;
    try {
      ({ summaries } = await q("summary.list", { threadId }));
    } catch (error) {
      if (error?.name !== "NotFoundError") console.warn("summary.list failed", error);
      return;
    }
    if (this.chat.threadId !== threadId) return;
    const key = JSON.stringify([threadId, summaries]);
    if (key === this.readKey) return;
    this.readKey = key;
    const by = new Map();
    for (const s of summaries ?? []) {
      if (!by.has(s.attachmentId)) by.set(s.attachmentId, []);
      by.get(s.attachmentId).push(s);
    }
    this.byOriginal = by;
    this.chat.render();
  }

  /** A conversation is opened: forget the last one's summaries (the chat runs the pass once it is quiet). */
  opened() {
    this.byOriginal = new Map();
    this.readKey = null;
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
