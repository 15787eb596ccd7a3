// OpenAI chat-completions shapes: the request messages of a thread context, and the
// assistant node's usage from a reply's usage object.

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
