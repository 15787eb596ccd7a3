// Replies being streamed, one per thread at most. A reply belongs to its thread, not to
// the view: it keeps streaming while the user opens other conversations, and it is
// stored in its own thread when it ends. Its element is shown whenever that thread
// is the one on screen. A reply that ends early keeps the text that arrived: one node,
// written once, marked `interrupted: "stopped"` (the user's Stop) or `"cut_off"` (the
// stream broke off, timed out or failed midway). With no text yet, nothing is stored.
//
// The overflow rescue: a request the provider refuses as over the model's window (Python
// decides, `provider.overflow`) is rebuilt once by `thread.request {rescue}` (large items
// cut) and streamed once more. Only once that reply is stored is the cut recorded
// (`thread.rescued`), so later turns start from it; a second refusal records nothing.
import { h, replace } from "./panel_dom.mjs";
import { cmd, q, hasQuery } from "./panel_store.mjs";
import { renderMarkdown } from "./panel_markdown.mjs";
import { ProviderError, streamChat, toOpenAi, toUsage } from "./panel_provider.mjs";

/**
 * The provider request for the path ending at `leafId`: `thread.request` (the context
 * slimmed and cut to the newest turns within `contextBudget` characters, for `model`,
 * with images as data URLs by attachment id; `rescue`: rebuilt after an overflow). A
 * runtime without `thread.request` falls back to `thread.context` + `attachment.resolve`.
 */
async function providerRequest(threadId, leafId, caps, { contextBudget, model, rescue }) {
  const images = {};
  const add = (attachments) => {
    for (const [id, a] of Object.entries(attachments ?? {})) {
      if (a?.dataBase64) images[id] = `data:${a.mime};base64,${a.dataBase64}`;
    }
  };
  if (await hasQuery("thread.request")) {
    const args = { threadId, leafId, model };
    if (contextBudget !== undefined) args.contextBudget = contextBudget;
    if (rescue) args.rescue = rescue;
    const context = await q("thread.request", args);
    add(context.attachments);
    return { context, images };
  }
  const context = await q("thread.context", { threadId, leafId });
  if (caps.attachments && context.messages.some((m) => (m.content ?? []).some((b) => b.type === "image"))) {
    add((await q("attachment.resolve", { threadId, leafId })).attachments);
  }
  return { context, images };
}

/** Whether `error` is the provider refusing a request as over the model's window (Python's rule). */
async function isOverflow(error) {
  // An HTTP refusal, or an error event in the stream before any text (no status).
  if (!(error instanceof ProviderError) || !["http", "provider"].includes(error.kind)) return false;
  if (!(await hasQuery("provider.overflow"))) return false;
  const args = { status: error.status ?? null, message: error.providerMessage ?? "", code: error.code ?? null, type: error.type ?? null };
  try {
    return !!(await q("provider.overflow", args)).overflow;
  } catch (failure) {
    console.warn("provider.overflow failed", failure);
    return false;
  }
}

/** The plain words for a conversation over `model`'s window even after the rescue. */
export function tooLongText(model, draftBack) {
  return (
    `This conversation is too long for ${model}, even with its large attachments cut down, so no reply was made and nothing was changed. ` +
    "To go on: choose a model with a larger context window, set a smaller \"History per request\" in Settings → Provider, " +
    `or remove a large attachment.${draftBack ? " What you typed is back in the message box." : ""}`
  );
}

export class Replies {
  /**
   * `events`: `changed(threadId, stored?)` when a reply starts, ends or is stored (the
   * view re-renders that thread if it is on screen; `stored`: `{nodeId, el, mode,
   * userNodeId}` once the reply is stored, its element to show until the view has it), `delta(threadId)` as text arrives,
   * `failed(threadId, message, error, retry, label)` when a reply could not be made or kept (or was cut off), and
   * `noted(threadId, message, retry, label)` for a neutral note (a Stop before any text arrived),
   * and `restore(threadId, draft, userNodeId)` to give the composer back the text typed for a
   * message the model cannot take (true when it did).
   */
  constructor(app, events) {
    this.app = app;
    this.events = events;
    this.streams = new Map(); // threadId -> {controller, el, userNodeId, mode, text}
    /** streamChat's limits ({firstByteTimeoutMs, totalTimeoutMs}); empty: its defaults. */
    this.timeouts = {};
  }

  /** The reply streaming in `threadId`, or undefined. */
  get(threadId) {
    return this.streams.get(threadId);
  }

  /**
   * Stop the reply streaming in `threadId`: the text that arrived is stored, marked
   * "stopped". With `discard` (its thread is being deleted or replaced) nothing is
   * stored and nothing is said.
   */
  stop(threadId, { discard = false } = {}) {
    const stream = this.streams.get(threadId);
    if (!stream) return;
    if (discard) stream.discard = true;
    stream.controller.abort();
  }

  /**
   * Stream a reply to `userNodeId` in `threadId` and store it once complete: "append"
   * adds it as the user node's child, "regenerate" as a new version of its reply.
   * `draft`: the text the user typed for it in the composer, given back to the composer
   * if the conversation is too long for the model even after the rescue.
   */
  async generate(threadId, userNodeId, mode, provider, { draft = null } = {}) {
    if (this.streams.has(threadId) || !provider) return;
    const body = h("div", { class: "msg-body" }, h("span", { class: "typing", text: "Thinking…" }));
    const el = h("div", { class: "msg assistant streaming", dataset: { streaming: "1", threadId } }, body);
    const stream = { controller: new AbortController(), el, userNodeId, mode, text: "" };
    this.streams.set(threadId, stream);
    this.events.changed(threadId);
    const retry = () => this.generate(threadId, userNodeId, mode, provider);
    const ask = async (rescue) => {
      const { context, images } = await providerRequest(threadId, userNodeId, this.app.caps, {
        contextBudget: provider.contextBudget,
        model: provider.model,
        rescue,
      });
      const messages = toOpenAi(context, images);
      const reply = await streamChat({
        baseUrl: provider.baseUrl,
        apiKey: await provider.apiKey(),
        model: provider.model,
        messages,
        signal: stream.controller.signal,
        ...this.timeouts,
        onDelta: (full) => {
          stream.text = full;
          replace(body, renderMarkdown(full));
          this.events.delta(threadId);
        },
      }).catch((error) => {
        error.refusedChars = JSON.stringify(messages).length;
        throw error;
      });
      return { reply, context };
    };
    let result;
    let rescued = null; // the rescue's record, once its retry answered
    try {
      try {
        result = (await ask(null)).reply;
      } catch (error) {
        if (stream.text || !(await isOverflow(error))) throw error;
        // Refused as too long: rebuilt with the large items cut, and tried exactly once more.
        el.dataset.rescuing = "1";
        let asked;
        try {
          asked = await ask({ refusedChars: error.refusedChars });
        } catch (second) {
          if (!stream.text && second?.name !== "AbortError" && (await isOverflow(second))) second.tooLong = true;
          throw second;
        }
        result = asked.reply;
        rescued = asked.context.rescue?.record ?? null;
      }
    } catch (error) {
      const stopped = error?.name === "AbortError";
      if (stream.text && !stream.discard) {
        // What arrived is the reply, marked: a Stop is no error; a cut-off one says why.
        const interrupted = stopped ? "stopped" : "cut_off";
        const partial = { text: stream.text, model: provider.model, usage: null, interrupted };
        const ok = await this.store(threadId, userNodeId, mode, provider, partial, stream);
        if (ok && !stopped) {
          const again = () => this.generate(threadId, userNodeId, "regenerate", provider);
          this.events.failed(threadId, "The reply was cut off; the text that arrived is kept.", error, again, "Retry");
        }
        return;
      }
      this.streams.delete(threadId);
      this.events.changed(threadId);
      if (stream.discard) return;
      if (stopped) {
        this.events.noted(threadId, "Stopped before any reply arrived; nothing was saved.", retry, "Retry");
      } else if (error?.tooLong) {
        console.warn("the rescued request was refused too", error);
        const back = draft ? this.events.restore?.(threadId, draft, userNodeId) : false;
        const again = () => this.generate(threadId, userNodeId, mode, this.app.chat?.provider ?? provider);
        this.events.failed(threadId, tooLongText(provider.model, back), null, again, "Retry");
      } else {
        this.events.failed(threadId, "The reply failed.", error, retry);
      }
      return;
    }
    // A rescued reply records its cut once stored, while it still shows as streaming (so
    // no next turn of this panel starts before the cut is recorded).
    const after = rescued ? () => this.recordCut(threadId, provider.model, rescued) : null;
    await this.store(threadId, userNodeId, mode, provider, result, stream, after);
  }

  /** After a rescued reply is stored: record the cut, so the next turns start from it. */
  async recordCut(threadId, model, record) {
    try {
      await cmd("thread.rescued", { threadId, model, record });
    } catch (error) {
      // The reply is kept; the next turn is refused once more and rescued again.
      console.warn("thread.rescued failed", error);
    }
  }

  /**
   * Store `result` (`interrupted` set when it ended early); true once stored. `after`:
   * awaited once it is stored, before the reply stops showing as streaming.
   */
  async store(threadId, userNodeId, mode, provider, result, stream, after = null) {
    const payload = {
      content: [{ type: "text", text: result.text }],
      model: result.model || provider.model,
      connectionId: provider.connectionId,
    };
    if (result.interrupted) payload.interrupted = result.interrupted;
    const usage = toUsage(result.usage);
    if (usage) payload.usage = usage;
    let stored;
    try {
      if (mode === "regenerate") stored = await cmd("message.regenerate", { threadId, userNodeId, payload });
      else stored = await cmd("message.append", { threadId, type: "assistant_message", payload, parentId: userNodeId });
    } catch (error) {
      this.streams.delete(threadId);
      this.events.changed(threadId);
      // The text is kept on the retry: storing it again does not ask the provider twice.
      const again = () => this.retryStore(threadId, userNodeId, mode, provider, result);
      this.events.failed(threadId, "The reply could not be saved.", error, again);
      return false;
    }
    await after?.();
    if (this.streams.get(threadId) === stream) this.streams.delete(threadId);
    this.events.changed(threadId, { nodeId: stored?.nodeId, el: stream.el, mode, userNodeId });
    return true;
  }

  async retryStore(threadId, userNodeId, mode, provider, result) {
    const stream = { controller: new AbortController(), el: null, userNodeId, mode, text: result.text };
    this.streams.set(threadId, stream);
    await this.store(threadId, userNodeId, mode, provider, result, stream);
  }
}
