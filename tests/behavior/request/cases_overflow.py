"""Overflow recognition: which provider errors are a context overflow (retried once, cut).

The messages are the providers' own (see :mod:`panelot.request.overflow` for where each
was seen); the table runs through the pure function and the ``provider.overflow`` query.
"""

from __future__ import annotations

from typing import Any

from behavior import Ctx
from panelot.request.overflow import is_overflow

OPENAI = (
    "This model's maximum context length is 8192 tokens. However, your messages resulted "
    "in 10383 tokens. Please reduce the length of the messages."
)

# (status, message, code, type, overflow?)
TABLE: list[tuple[int | None, str, Any, Any, bool]] = [
    # OpenAI, Azure OpenAI
    (400, OPENAI, "context_length_exceeded", "invalid_request_error", True),
    (400, "Your input exceeds the context window of this model.", None, None, True),
    (
        400,
        "Input tokens exceed the configured limit of 272000 tokens. Your messages resulted "
        "in 509178 tokens. Please reduce the length of the messages.",
        None,
        None,
        True,
    ),
    # Groq: only the request, with the code
    (
        400,
        "Please reduce the length of the messages or completion.",
        "context_length_exceeded",
        "invalid_request_error",
        True,
    ),
    # vLLM: a numeric code; DeepSeek: a generic code, the message says it
    (
        400,
        "This model's maximum context length is 16384 tokens. However, you requested 122946 "
        "tokens (112946 in the messages, 10000 in the completion). Please reduce the length "
        "of the messages or completion.",
        400,
        "BadRequestError",
        True,
    ),
    (
        400,
        "This model's maximum context length is 65536 tokens. However, you requested 66343 "
        "tokens (62247 in the messages, 4096 in the completion). Please reduce the length of "
        "the messages or completion.",
        "invalid_request_error",
        "invalid_request_error",
        True,
    ),
    # llama.cpp server: 400 with its type, 500 in older versions (the type says it)
    (
        400,
        "the request exceeds the available context size. try increasing the context size or "
        "enable context shift",
        400,
        "exceed_context_size_error",
        True,
    ),
    (
        500,
        "the request exceeds the available context size. try increasing the context size or "
        "enable context shift",
        500,
        "exceed_context_size_error",
        True,
    ),
    (
        400,
        "request (4390 tokens) exceeds the available context size (4096 tokens), try increasing it",
        None,
        None,
        True,
    ),
    (400, "input exceeds context length", None, None, True),  # Ollama
    (
        400,
        "Prompt contains 152960 tokens and 0 draft tokens, too large for model with 131072 "
        "maximum context length",
        None,
        None,
        True,
    ),  # Mistral
    (
        400,
        "This endpoint's maximum context length is 128000 tokens. However, you requested "
        "about 200000 tokens.",
        None,
        None,
        True,
    ),  # OpenRouter
    (
        400,
        "This model's maximum prompt length is 500000 but the request contains 907154 tokens.",
        None,
        None,
        True,
    ),
    # Anthropic
    (
        400,
        "prompt is too long: 219898 tokens > 200000 maximum",
        None,
        "invalid_request_error",
        True,
    ),
    (
        400,
        "input length and max_tokens exceed context limit: 198981 + 21333 > 200000, decrease "
        "input length or max_tokens and try again",
        None,
        "invalid_request_error",
        True,
    ),
    # A plain 413, and Anthropic's request_too_large
    (413, "", None, None, True),
    (413, "Request exceeds the maximum allowed number of bytes.", None, "request_too_large", True),
    # An error event in a stream: no status
    (None, OPENAI, "context_length_exceeded", None, True),
    # --- not overflows ---
    (
        400,
        "The model `gpt-9` does not exist or you do not have access to it.",
        "model_not_found",
        "invalid_request_error",
        False,
    ),
    (
        400,
        "max_tokens: 10000 > 4096, which is the maximum allowed number of output tokens for "
        "claude-3-5-sonnet-20240620",
        None,
        "invalid_request_error",
        False,
    ),
    (401, "Incorrect API key provided", "invalid_api_key", "invalid_request_error", False),
    (
        429,
        "Request too large for gpt-4o in organization org-x on tokens per min (TPM): Limit "
        "30000, Requested 30601. The input or output tokens must be reduced in order to run "
        "successfully.",
        "rate_limit_exceeded",
        "tokens",
        False,
    ),
    (
        429,
        "This request would exceed the rate limit for your organization of 20,000 input "
        "tokens per minute. Please reduce the prompt length or the maximum tokens requested.",
        None,
        "rate_limit_error",
        False,
    ),
    # a TPM limit sent with a 400 (or in a stream) is still a rate limit
    (
        None,
        "Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30000, Requested 36055. "
        "Please reduce the length of the messages.",
        None,
        None,
        False,
    ),
    (500, "Context size has been exceeded.", 500, "server_error", False),
    (500, "Internal server error", None, "api_error", False),
    (529, "Overloaded", None, "overloaded_error", False),
    (400, "", None, None, False),
    (None, "", None, None, False),
]


def _word(value: Any) -> str | None:
    return None if value is None else str(value)


async def case_overflow_table_pure(ctx: Ctx) -> None:
    for status, message, code, kind, expected in TABLE:
        got = is_overflow(status, message, _word(code), _word(kind))
        assert got is expected, (status, message, code, kind, expected)


async def case_overflow_table_through_the_query(ctx: Ctx) -> None:
    store = await ctx.store()
    for status, message, code, kind, expected in TABLE:
        args: dict[str, Any] = {"message": message}
        for name, value in (("status", status), ("code", code), ("type", kind)):
            if value is not None:
                args[name] = value
        out = await store.query("provider.overflow", args)
        assert out == {"overflow": expected}, (args, expected)
    assert await store.query("provider.overflow", {}) == {"overflow": False}
