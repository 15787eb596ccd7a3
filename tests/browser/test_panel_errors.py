"""``explainError`` (extension/panel_errors.mjs): any error the panel meets, in words.

A table of errors, built in a page of the built extension the way the panel meets
them (runtime error objects wrapped in ``StoreError``, ``ProviderError``s, DOMExceptions,
TypeErrors, other throws), and the exact sentence each must become. Every ``text`` is
checked to carry no type name, no id and no raw list, and every ``detail`` to keep the
technical message.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Page

from e2e_support import open_module_page

STORAGE_FULL = (
    "Storage is full, so nothing was saved. Free space (Settings → Clean up attachments, "
    "or delete old conversations), then retry."
)
STORAGE_FAILED = (
    "Storage failed, so the action did not complete. Try again; if it keeps failing, "
    "reload the panel."
)
GENERIC = "Something went wrong, so the action did not complete."
NODE = "5f0c1d2e-8a9b-4c3d-9e8f-7a6b5c4d3e2f"


def store(name: str, message: str, field: str | None = None) -> dict[str, Any]:
    return {"store": {"name": name, "message": message, "field": field}}


def provider(message: str, **options: Any) -> dict[str, Any]:
    return {"provider": [message, options]}


#: (what is thrown, the text the user must see)
CASES: list[tuple[dict[str, Any], str]] = [
    (store("QuotaExceededError", "attachment.put: QuotaExceededError: quota"), STORAGE_FULL),
    ({"dom": ["The quota has been exceeded.", "QuotaExceededError"]}, STORAGE_FULL),
    (
        store("NotFoundError", f"thread {NODE!r} does not exist", "threadId"),
        "This conversation no longer exists.",
    ),
    (
        store("NotFoundError", f"node {NODE!r} does not exist in this thread", "nodeId"),
        "This message no longer exists.",
    ),
    (
        store("NotFoundError", f"attachment {NODE!r} was evicted", "attachmentId"),
        "This attachment is no longer stored; it may have been cleaned up to save space.",
    ),
    (
        store("NotFoundError", "cred:1234: no such credential", "ref"),
        "The stored API key is missing: enter it again in Settings.",
    ),
    (
        store("NotFoundError", "the store is not started; call start() first"),
        "This item no longer exists; it may have been deleted elsewhere.",
    ),
    (
        store("ValidationError", "patch.title: at most 300 characters", "patch.title"),
        "The title was not accepted.",
    ),
    (store("ValidationError", "tags[3]: too long", "tags[3]"), "The tags were not accepted."),
    (
        store(
            "ValidationError", "payload.content[0].text: not a string", "payload.content[0].text"
        ),
        "The message was not accepted.",
    ),
    (
        store("ValidationError", f"nodes[3].id: {NODE} repeated; and 9980 more", "nodes[3].id"),
        "Some of the input was not accepted.",
    ),
    (
        store("ImportError", "import refused: nodes[0]: bad; and 9980 more", "nodes[0]"),
        "This file cannot be imported: it is not a valid Panelot export. Nothing was imported.",
    ),
    (
        store("AdmissionError", "thread is being deleted"),
        "This conversation is being deleted, so nothing more can be added to it.",
    ),
    (
        store("UnknownCommandError", "unknown query 'x.y'"),
        "This version of Panelot cannot do that.",
    ),
    (store("TransactionInactiveError", "The transaction has finished"), STORAGE_FAILED),
    (store("UnknownError", "chrome.storage.local.set: IO error"), STORAGE_FAILED),
    (store("AbortError", "the transaction was aborted"), STORAGE_FAILED),
    (store("WeirdNewError", "???"), GENERIC),
    (
        provider(
            "HTTP 401: Incorrect API key provided.",
            kind="http",
            status=401,
            providerMessage="Incorrect API key provided.",
        ),
        "The provider refused the request (HTTP 401): check the API key in Settings."
        " It said: “Incorrect API key provided.”",
    ),
    (
        provider(
            "HTTP 404: no such model", kind="http", status=404, providerMessage="no such model"
        ),
        "The provider does not know this address or model (HTTP 404): check the base URL and"
        " the model in Settings. It said: “no such model.”",
    ),
    (
        provider("HTTP 429", kind="http", status=429),
        "The provider is limiting requests (HTTP 429): wait a moment, then retry.",
    ),
    (
        provider("HTTP 503", kind="http", status=503),
        "The provider had a problem (HTTP 503). Try again later.",
    ),
    (
        provider("HTTP 400", kind="http", status=400),
        "The provider refused the request (HTTP 400).",
    ),
    (
        provider(
            "Cannot reach the provider at https://llm.example.",
            kind="unreachable",
            detail="POST https://llm.example/v1/chat/completions failed: Failed to fetch",
        ),
        "Cannot reach the provider at https://llm.example. Check the base URL in Settings and"
        " the network connection.",
    ),
    (
        provider("The provider did not answer within 30 s.", kind="timeout-first-byte"),
        "The provider did not answer within 30 s. Check the provider in Settings, or try again"
        " later.",
    ),
    (
        provider("The reply took longer than 10 min, so it was stopped.", kind="timeout-total"),
        "The reply took longer than 10 min, so it was stopped. Try again.",
    ),
    (
        provider("overloaded", kind="provider", providerMessage="overloaded"),
        "The provider reported an error. It said: “overloaded.”",
    ),
    (
        provider("The provider's reply broke off before it was complete.", kind="stream"),
        "The provider's reply broke off before it was complete. Try again.",
    ),
    ({"dom": ["stopped", "AbortError"]}, "Stopped."),
    (
        {"dom": ["signal timed out", "TimeoutError"]},
        "The request took too long, so it was stopped.",
    ),
    (
        {"type": "Failed to fetch"},
        "The network request failed: check the connection, then try again.",
    ),
    ({"error": "x.map is not a function"}, GENERIC),
    ({"value": "boom"}, GENERIC),
    ({"value": None}, GENERIC),
]

EXPLAIN = """async (cases) => {
  const { explainError } = await import("/panel_errors.mjs");
  const { StoreError } = await import("/panel_store.mjs");
  const { ProviderError } = await import("/panel_provider.mjs");
  const make = (c) => {
    if ("store" in c) return new StoreError(c.store);
    if ("provider" in c) return new ProviderError(...c.provider);
    if ("dom" in c) return new DOMException(...c.dom);
    if ("type" in c) return new TypeError(c.type);
    if ("error" in c) return new Error(c.error);
    return c.value;
  };
  return cases.map((c) => explainError(make(c)));
}"""

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
TYPE_NAME = re.compile(r"[A-Z][A-Za-z]*(Error|Exception)\b")


@pytest.fixture(scope="module")
def explained(extension_context: tuple[BrowserContext, str]) -> Iterator[list[dict[str, str]]]:
    context, extension_id = extension_context
    page: Page = open_module_page(context, extension_id)
    yield page.evaluate(EXPLAIN, [case for case, _ in CASES])
    page.close()


@pytest.mark.parametrize(("index", "expected"), [(i, text) for i, (_, text) in enumerate(CASES)])
def test_each_error_gets_its_plain_sentence(
    explained: list[dict[str, str]], index: int, expected: str
) -> None:
    assert explained[index]["text"] == expected, CASES[index][0]


def test_no_sentence_holds_a_type_name_an_id_or_a_raw_list(
    explained: list[dict[str, str]],
) -> None:
    for (case, _), out in zip(CASES, explained, strict=True):
        text = out["text"]
        assert not TYPE_NAME.search(text), (case, text)
        assert not UUID.search(text) and not re.search(r"\d+ more", text), (case, text)


def test_the_detail_keeps_the_technical_message(explained: list[dict[str, str]]) -> None:
    for (case, _), out in zip(CASES, explained, strict=True):
        if "store" in case:
            raw = case["store"]
            assert out["detail"].startswith(f"{raw['name']}"), out
            assert raw["message"] in out["detail"]
            if raw["field"]:
                assert f"[{raw['field']}]" in out["detail"]
        elif "provider" in case:
            message, options = case["provider"]
            assert out["detail"].startswith(f"ProviderError ({options['kind']}"), out
            assert options.get("detail", message) in out["detail"]
        elif case.get("value") is None and "value" in case:
            assert out["detail"] == ""
        else:
            key = next(iter(case))
            shown = case[key][0] if key == "dom" else case[key]
            assert str(shown) in out["detail"], (case, out)
