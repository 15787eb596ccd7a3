"""Is a provider's refusal a context overflow? (:func:`is_overflow`, pure).

The overflow rescue (:mod:`panelot.request.rescue`) retries a turn once, cut down, when
the provider refused it because the request does not fit the model's context window,
and never for anything else: a retry does not fix a bad model name (400), a key (401),
a rate limit (429, even a "tokens per minute" one, which mentions tokens and asks to
reduce the prompt) or a server fault (500).

The forms recognized, as the providers send them (the error body's ``error.code``,
``error.type`` and ``error.message``, and the HTTP status):

* **OpenAI** (and Azure OpenAI, Groq): HTTP 400, ``code: "context_length_exceeded"``,
  ``type: "invalid_request_error"``, ``"This model's maximum context length is 8192
  tokens. However, your messages resulted in 10383 tokens. Please reduce the length of
  the messages."`` (Groq: only ``"Please reduce the length of the messages or
  completion."``; Azure also ``"Input tokens exceed the configured limit of 272000
  tokens. Your messages resulted in … tokens. Please reduce the length of the
  messages."``; the Responses API ``"Your input exceeds the context window of this
  model."``). Seen in Azure/azure-sdk-for-python#40986, microsoft/kernel-memory#516,
  letta-ai/letta#1963, BerriAI/litellm#15968.
* **OpenAI-compatible servers**: vLLM ``"This model's maximum context length is 16384
  tokens. However, you requested 122946 tokens (…). Please reduce the length of the
  messages or completion."`` with ``type: "BadRequestError"`` and a numeric ``code: 400``
  (vllm-project/vllm#20409); DeepSeek the same message with ``code:
  "invalid_request_error"`` (FoundationAgents/OpenManus#79); OpenRouter ``"This
  endpoint's maximum context length is …"``; Mistral ``"Prompt contains 152960 tokens
  and 0 draft tokens, too large for model with 131072 maximum context length"``
  (jupyterlite/ai#291); Cerebras ``"Please reduce the length of the messages or
  completion. Current length is 42328 while limit is 40000"`` (cline/cline#5140);
  xAI ``"This model's maximum prompt length is 500000 but the request contains …
  tokens."``; llama.cpp server ``"the request exceeds the available context size. try
  increasing the context size or enable context shift"`` or ``"request (4390 tokens)
  exceeds the available context size (4096 tokens), try increasing it"`` with ``type:
  "exceed_context_size_error"`` (HTTP 400; 500 before ggml-org/llama.cpp#16486: see
  #15780, #19774); Ollama ``"input exceeds context length"`` (when it does not
  truncate); LM Studio and llama.cpp ``"Context size has been exceeded."``.
* **Anthropic**: HTTP 400, ``type: "invalid_request_error"``, ``"prompt is too long:
  219898 tokens > 200000 maximum"``, or ``"input length and max_tokens exceed context
  limit: 198981 + 21333 > 200000, …"`` (docs.claude.com/en/api/errors;
  earendil-works/pi#102). Its 413 ``request_too_large`` (over 32 MB) is a plain 413.
* **A plain HTTP 413** (Payload Too Large), whatever the body says.

The rule: a 413 is an overflow. A 429, 401, 403, 404 never is, nor is anything that
names a rate limit (``code: "rate_limit_exceeded"``, ``type: "rate_limit_error"`` or
``"tokens"``, "per minute", "TPM"): OpenAI's ``"Request too large for gpt-4o … on
tokens per min (TPM): Limit 30000, Requested 30601. The input or output tokens must be
reduced"`` and Anthropic's ``"This request would exceed the rate limit for your
organization of 20,000 input tokens per minute … Please reduce the prompt length"``
(both 429; FoundationAgents/OpenManus#746, DrShushen/climb#13) are not. An explicit
overflow ``code``/``type`` (``context_length_exceeded``, ``exceed_context_size_error``)
counts with status 400, 413, any 5xx or none (an error event in a stream). A message
form counts only with status 400 or none: a 500 whose text mentions the context (a
crash) is not retried. ``status`` ``None``: the error came without an HTTP status.
Anthropic's ``"max_tokens: 10000 > 4096, which is the maximum allowed number of output
tokens"`` (a bad setting, 400) matches no form.
"""

from __future__ import annotations

import re

__all__ = ["OVERFLOW_CODES", "is_overflow"]

OVERFLOW_CODES = frozenset({"context_length_exceeded", "exceed_context_size_error"})
"""Error ``code`` or ``type`` values that name a context overflow by themselves."""

_RATE = frozenset({"rate_limit_exceeded", "rate_limit_error", "tokens", "insufficient_quota"})
_NEVER = frozenset({401, 402, 403, 404, 408, 409, 429})

_FORMS = re.compile(
    "|".join(
        [
            r"prompt is too long",
            r"maximum context length",
            r"maximum prompt length",
            r"context[ _]length[ _]exceeded",
            r"context (?:size|length|window) (?:has been |was |is )?exceeded",
            r"exceeds? (?:the )?(?:available |maximum |model'?s? )?context"
            r"(?: size| length| limit| window)",
            r"exceeds? (?:the )?context window",
            r"reduce the length of the messages",
            r"input tokens exceed the configured limit",
            r"too large for model with",
            r"too many tokens",
        ]
    ),
    re.IGNORECASE,
)
_RATE_TEXT = re.compile(r"rate limit|per min(?:ute)?\b|\bTPM\b|\bRPM\b", re.IGNORECASE)


def _word(value: object) -> str:
    return str(value).strip().lower() if value is not None else ""


def is_overflow(
    status: int | None, message: str, code: str | None = None, type_: str | None = None
) -> bool:
    """Whether a provider's error is a context overflow (the rule of the module docstring).

    ``status``: the HTTP status (``None``: none); ``message``, ``code``, ``type_``: the
    error body's fields. Pure.
    """
    if status == 413:
        return True
    if status in _NEVER:
        return False
    code_, kind = _word(code), _word(type_)
    text = message if isinstance(message, str) else ""
    if code_ in _RATE or kind in _RATE or _RATE_TEXT.search(text):
        return False
    if code_ in OVERFLOW_CODES or kind in OVERFLOW_CODES:
        return status is None or status == 400 or status >= 500
    if status is not None and status != 400:
        return False
    return _FORMS.search(text) is not None
