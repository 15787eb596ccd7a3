// OpenAI-compatible chat completions with SSE streaming over fetch. Deltas stay in
// memory; the caller writes one assistant node when the stream has completed.

/** A failed provider call, with the HTTP status when there was one. */
export class ProviderError extends Error {
  constructor(message, status) {
    super(message);
    this.name = "ProviderError";
    this.status = status;
  }
}

/** Parse an SSE byte stream, calling `onEvent(data)` for each `data:` payload. */
async function readSse(body, onEvent, signal) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buffer.search(/\r?\n\r?\n/)) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut).replace(/^\r?\n\r?\n/, "");
        const data = block
          .split(/\r?\n/)
          .filter((l) => l.startsWith("data:"))
          .map((l) => l.slice(5).replace(/^ /, ""))
          .join("\n");
        if (data && onEvent(data) === false) return;
      }
      if (signal?.aborted) throw new DOMException("stopped", "AbortError");
    }
  } finally {
    reader.releaseLock();
  }
}

/**
 * Stream one reply. Resolves `{text, usage, model, finishReason}`; rejects with an
 * AbortError when `signal` aborts, or a ProviderError.
 */
export async function streamChat({ baseUrl, apiKey, model, messages, signal, onDelta }) {
  const url = `${baseUrl.replace(/\/+$/, "")}/chat/completions`;
  const headers = { "Content-Type": "application/json", Accept: "text/event-stream" };
  if (apiKey) headers.Authorization = `Bearer ${apiKey}`;
  let response;
  try {
    response = await fetch(url, {
      method: "POST",
      headers,
      signal,
      body: JSON.stringify({
        model,
        messages,
        stream: true,
        stream_options: { include_usage: true },
      }),
    });
  } catch (error) {
    if (error?.name === "AbortError") throw error;
    throw new ProviderError(`cannot reach ${url}: ${error?.message ?? error}`);
  }
  if (!response.ok) {
    let detail = "";
    try {
      const body = await response.text();
      detail = (JSON.parse(body)?.error?.message ?? body).slice(0, 300);
    } catch {
      /* keep the status alone */
    }
    throw new ProviderError(`HTTP ${response.status}${detail ? `: ${detail}` : ""}`, response.status);
  }
  let text = "";
  let usage = null;
  let finishReason = null;
  let replyModel = model;
  let done = false;
  await readSse(
    response.body,
    (data) => {
      if (data.trim() === "[DONE]") {
        done = true;
        return false;
      }
      let event;
      try {
        event = JSON.parse(data);
      } catch {
        throw new ProviderError(`malformed stream event: ${data.slice(0, 80)}`);
      }
      if (event.error) throw new ProviderError(event.error.message ?? "provider error");
      if (event.model) replyModel = event.model;
      if (event.usage) usage = event.usage;
      const choice = event.choices?.[0];
      const delta = choice?.delta?.content;
      if (typeof delta === "string" && delta) {
        text += delta;
        onDelta?.(text, delta);
      }
      if (choice?.finish_reason) finishReason = choice.finish_reason;
      return true;
    },
    signal,
  );
  if (!done && !finishReason) throw new ProviderError("the stream ended before the reply was complete");
  return { text, usage, model: replyModel, finishReason };
}

/**
 * OpenAI messages from a `thread.request` (or `thread.context`) result; images come from
 * `images` (id -> data URL). Slimmed blocks (`[Figure N: …]` placeholders with `seen`,
 * stale-attachment stubs) are text blocks and go as text; an image without data (evicted)
 * goes as an `[image: name]` line.
 */
export function toOpenAi(context, images = {}) {
  const out = [];
  for (const m of context.messages) {
    const blocks = Array.isArray(m.content) ? m.content : [];
    const text = blocks
      .map((b) => {
        if (b.type === "text") return b.text;
        if (b.type === "file") return `[file: ${b.name ?? b.attachmentId}]`;
        if (b.type === "image" && !images[b.attachmentId]) return `[image: ${b.name ?? b.attachmentId}]`;
        return "";
      })
      .filter(Boolean)
      .join("\n");
    if (m.role === "user") {
      const pictures = blocks.filter((b) => b.type === "image" && images[b.attachmentId]);
      if (pictures.length) {
        out.push({
          role: "user",
          content: [
            ...(text ? [{ type: "text", text }] : []),
            ...pictures.map((b) => ({ type: "image_url", image_url: { url: images[b.attachmentId] } })),
          ],
        });
      } else {
        out.push({ role: "user", content: text });
      }
    } else if (m.role === "assistant") {
      const msg = { role: "assistant", content: text };
      if (m.toolCalls?.length) {
        msg.tool_calls = m.toolCalls.map((c) => ({
          id: c.itemId,
          type: "function",
          function: { name: c.toolName, arguments: JSON.stringify(c.params ?? {}) },
        }));
      }
      out.push(msg);
    } else if (m.role === "tool") {
      out.push({ role: "tool", tool_call_id: m.itemId, content: text });
    }
  }
  return out;
}

/** The assistant node's `usage` from an OpenAI usage object (or null). */
export function toUsage(usage) {
  if (!usage) return null;
  const out = {
    inputTokens: Number(usage.prompt_tokens ?? usage.input_tokens ?? 0) | 0,
    outputTokens: Number(usage.completion_tokens ?? usage.output_tokens ?? 0) | 0,
  };
  const cached = usage.prompt_tokens_details?.cached_tokens;
  if (Number.isInteger(cached)) out.cacheReadTokens = cached;
  return out;
}
