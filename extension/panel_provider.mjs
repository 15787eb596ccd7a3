// OpenAI-compatible chat completions with SSE streaming over fetch. Deltas stay in
// memory; the caller writes one assistant node when the stream has completed. Every
// request has two time limits (panel_deadline.mjs), so a provider that never answers,
// or answers and then goes silent, ends in a ProviderError instead of a wait forever.
import { formatDuration, requestDeadline } from "./panel_deadline.mjs";
import { readSse } from "./panel_sse.mjs";

export { toOpenAi, toUsage } from "./panel_openai.mjs";

/**
 * The default time limits in ms, read at each call: `firstByteMs` until the reply's
 * first bytes arrive, `totalMs` for the whole reply, `connectionTestMs` for a whole
 * testConnection. A reasoning model that stays silent longer than `firstByteMs` before
 * its first byte needs a larger value.
 */
export const TIMEOUTS = { firstByteMs: 30_000, totalMs: 600_000, connectionTestMs: 15_000 };

/**
 * A failed provider call. `message` is a sentence for the user; `kind` says what failed:
 * "unreachable" (no HTTP response at all), "http" (an error status: `status`, and the
 * provider's own words in `providerMessage`), "timeout-first-byte", "timeout-total",
 * "stream" (the reply broke off or could not be read) or "provider" (an error event in
 * the stream). An error body's `error.code` and `error.type` are kept as `code` and
 * `type` (Python's `provider.overflow` reads them with `status` and `providerMessage`).
 * `detail` is the technical account (URL, status, what was received).
 * A user's Stop is not a ProviderError: it rejects with a DOMException "AbortError".
 */
export class ProviderError extends Error {
  constructor(message, { kind, status, providerMessage, code, type, detail } = {}) {
    super(message);
    this.name = "ProviderError";
    this.kind = kind;
    this.status = status;
    this.providerMessage = providerMessage;
    this.code = code;
    this.type = type;
    this.detail = detail ?? message;
  }
}

/** A string field of a provider's error body, or undefined. */
function field(value) {
  return typeof value === "string" && value ? value.slice(0, 100) : undefined;
}

const TIMEOUT_TEXT = {
  "timeout-first-byte": (limit) => `The provider did not answer within ${limit}.`,
  "timeout-total": (limit) => `The reply took longer than ${limit}, so it was stopped.`,
};

/** The origin of a URL for messages (scheme, host and port), or the URL itself. */
function originOf(url) {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

async function post(url, apiKey, body, signal) {
  const headers = { "Content-Type": "application/json", Accept: "text/event-stream" };
  if (apiKey) headers.Authorization = `Bearer ${apiKey}`;
  try {
    return await fetch(url, { method: "POST", headers, signal, body: JSON.stringify(body) });
  } catch (error) {
    if (signal.aborted) throw error; // a limit or a Stop: the caller says which
    throw new ProviderError(`Cannot reach the provider at ${originOf(url)}.`, {
      kind: "unreachable",
      detail: `POST ${url} failed: ${error?.message ?? error}`,
    });
  }
}

/** The ProviderError of an error status, with the provider's own message when it sent one. */
async function httpError(url, response) {
  let said = "";
  let code;
  let type;
  try {
    const body = await response.text();
    let parsed = null;
    try {
      parsed = JSON.parse(body);
    } catch {
      /* not JSON: keep the text */
    }
    said = String(parsed?.error?.message ?? parsed?.message ?? body).trim().slice(0, 300);
    code = field(parsed?.error?.code) ?? (Number.isInteger(parsed?.error?.code) ? String(parsed.error.code) : undefined);
    type = field(parsed?.error?.type);
  } catch {
    /* no readable body: keep the status alone */
  }
  const status = response.status;
  return new ProviderError(`HTTP ${status}${said ? `: ${said}` : ""}`, {
    kind: "http",
    status,
    providerMessage: said || undefined,
    code,
    type,
    detail: `POST ${url} → HTTP ${status} ${response.statusText}${said ? `: ${said}` : ""}`.trim(),
  });
}

/** One parsed stream event: `{done: true}` for `[DONE]`, else the event object. */
function parseEvent(data) {
  if (data.trim() === "[DONE]") return { done: true };
  let event;
  try {
    event = JSON.parse(data);
  } catch {
    throw new ProviderError("The provider sent a reply Panelot cannot read.", {
      kind: "stream",
      detail: `malformed stream event: ${data.slice(0, 200)}`,
    });
  }
  if (event?.error) {
    const said = String(event.error.message ?? "provider error");
    throw new ProviderError(said, {
      kind: "provider",
      providerMessage: said,
      code: field(event.error.code),
      type: field(event.error.type),
      detail: `stream error event: ${data.slice(0, 300)}`,
    });
  }
  return event;
}

/** What a rejected request becomes: a timeout's ProviderError, the user's AbortError, or itself. */
function settle(error, deadline, signal, url) {
  const kind = deadline.expired;
  if (kind) {
    const waited = kind === "timeout-first-byte" ? "no answer" : "no complete reply";
    return new ProviderError(TIMEOUT_TEXT[kind](formatDuration(deadline.limitMs)), {
      kind,
      detail: `POST ${url}: ${waited} after ${deadline.limitMs} ms, so the request was aborted`,
    });
  }
  if (signal?.aborted) {
    return error?.name === "AbortError" ? error : new DOMException("The request was stopped.", "AbortError");
  }
  if (error instanceof ProviderError) return error;
  return new ProviderError("The connection to the provider broke off before the reply was complete.", {
    kind: "stream",
    detail: `POST ${url}: ${error?.message ?? error}`,
  });
}

/**
 * POST `body` to `{baseUrl}/chat/completions` and feed each stream event to `onEvent`
 * (returning false stops the stream). Rejects as `settle` says.
 */
async function chatStream({ baseUrl, apiKey, body, signal, firstByteMs, totalMs, onEvent }) {
  const url = `${String(baseUrl).replace(/\/+$/, "")}/chat/completions`;
  const deadline = requestDeadline({ signal, firstByteMs, totalMs });
  try {
    const response = await post(url, apiKey, body, deadline.signal);
    if (!response.ok) {
      deadline.arrived();
      throw await httpError(url, response);
    }
    await readSse(response.body, (data) => onEvent(parseEvent(data)), {
      signal: deadline.signal,
      onBytes: deadline.arrived,
    });
  } catch (error) {
    throw settle(error, deadline, signal, url);
  } finally {
    deadline.done();
  }
}

/** Add one stream event to `reply`; false once the stream says it is done. */
function collect(reply, event, onDelta) {
  if (event.done) {
    reply.done = true;
    return false;
  }
  if (event.model) reply.model = event.model;
  if (event.usage) reply.usage = event.usage;
  const choice = event.choices?.[0];
  const delta = choice?.delta?.content;
  if (typeof delta === "string" && delta) {
    reply.text += delta;
    onDelta?.(reply.text, delta);
  }
  if (choice?.finish_reason) reply.finishReason = choice.finish_reason;
  return true;
}

/**
 * Stream one reply. Resolves `{text, usage, model, finishReason}`; rejects with an
 * AbortError when `signal` aborts, or a ProviderError (see its `kind`). No first byte
 * within `firstByteTimeoutMs`, or no complete reply within `totalTimeoutMs`, aborts the
 * fetch and rejects with kind "timeout-first-byte" or "timeout-total".
 */
export async function streamChat({
  baseUrl,
  apiKey,
  model,
  messages,
  signal,
  onDelta,
  firstByteTimeoutMs = TIMEOUTS.firstByteMs,
  totalTimeoutMs = TIMEOUTS.totalMs,
}) {
  const reply = { text: "", usage: null, model, finishReason: null, done: false };
  await chatStream({
    baseUrl,
    apiKey,
    signal,
    firstByteMs: firstByteTimeoutMs,
    totalMs: totalTimeoutMs,
    body: { model, messages, stream: true, stream_options: { include_usage: true } },
    onEvent: (event) => collect(reply, event, onDelta),
  });
  if (!reply.done && !reply.finishReason) {
    throw new ProviderError("The provider's reply broke off before it was complete.", {
      kind: "stream",
      detail: "the stream ended without [DONE] or a finish_reason",
    });
  }
  return { text: reply.text, usage: reply.usage, model: reply.model, finishReason: reply.finishReason };
}

/**
 * One reply without streaming (`stream: false`), for work in the background such as an
 * attachment's summary: resolves `{text, usage, model}`; rejects like streamChat (a
 * ProviderError, or an AbortError on `signal`). `timeoutMs` bounds the whole call.
 */
export async function completeChat({ baseUrl, apiKey, model, messages, signal, timeoutMs = TIMEOUTS.totalMs }) {
  const url = `${String(baseUrl).replace(/\/+$/, "")}/chat/completions`;
  const deadline = requestDeadline({ signal, firstByteMs: timeoutMs, totalMs: timeoutMs });
  try {
    const response = await post(url, apiKey, { model, messages, stream: false }, deadline.signal);
    deadline.arrived();
    if (!response.ok) throw await httpError(url, response);
    let parsed;
    try {
      parsed = await response.json();
    } catch (error) {
      if (deadline.signal.aborted) throw error;
      throw new ProviderError("The provider sent a reply Panelot cannot read.", { kind: "stream", detail: `POST ${url}: not JSON` });
    }
    const text = parsed?.choices?.[0]?.message?.content;
    if (typeof text !== "string" || !text.trim()) {
      throw new ProviderError("The provider answered, but sent no text.", { kind: "stream", detail: `POST ${url}: no message content` });
    }
    return { text, usage: parsed.usage ?? null, model: parsed.model || model };
  } catch (error) {
    throw settle(error, deadline, signal, url);
  } finally {
    deadline.done();
  }
}

/** The one-word prompt of a connection test. */
export const TEST_PROMPT = "Reply with the single word OK.";

/**
 * Check that a provider answers: the same streaming chat-completions request a reply
 * makes (same URL, key, model and headers), with a one-word prompt, stopped at the first
 * stream event. Resolves `{model}` (the model the provider named, else `model`);
 * rejects like streamChat, with one limit of `timeoutMs` for the whole test.
 */
export async function testConnection({ baseUrl, apiKey, model, signal, timeoutMs = TIMEOUTS.connectionTestMs }) {
  let answered = null;
  await chatStream({
    baseUrl,
    apiKey,
    signal,
    firstByteMs: timeoutMs,
    totalMs: timeoutMs,
    body: { model, messages: [{ role: "user", content: TEST_PROMPT }], stream: true },
    onEvent: (event) => {
      answered = event.model || model;
      return false;
    },
  });
  if (answered === null) {
    throw new ProviderError("The provider answered, but sent no reply.", {
      kind: "stream",
      detail: "HTTP 200 with an empty event stream",
    });
  }
  return { model: answered };
}
