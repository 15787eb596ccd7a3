"""``streamChat`` and ``testConnection`` (extension/panel_provider.mjs) on their own.

They run in a page of the built extension (its origin and CSP) against the stub
provider's misbehaving modes (panelot/testing/stub_provider.py): ``never`` (no answer at all),
``stall`` (the headers, then silence), ``drip`` (a reply that never ends) and
``status-401``. Each time limit is small here. The stub watches its side of each
connection, so a test proves that a limit aborted the fetch by waiting for the stub to
see the connection closed; a request merely given up on in JS would stay open.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Page

from e2e_support import open_module_page
from panelot.testing import StubProvider

STREAM = """async ([url, options]) => {
  const m = await import("/panel_provider.mjs");
  const deltas = [];
  try {
    const reply = await m.streamChat({
      baseUrl: url, apiKey: "sk-unit", model: "unit-model",
      messages: [{ role: "user", content: "hello there" }],
      onDelta: (full) => deltas.push(full), ...options });
    return { ok: true, reply, deltas };
  } catch (error) {
    return { ok: false, name: error.name, kind: error.kind ?? null, message: error.message,
             providerError: error instanceof m.ProviderError,
             domException: error instanceof DOMException, deltas };
  }
}"""

STOP_ON_FIRST_DELTA = """async (url) => {
  const m = await import("/panel_provider.mjs");
  const stop = new AbortController();
  try {
    await m.streamChat({ baseUrl: url, model: "unit-model", messages: [], signal: stop.signal,
                         onDelta: () => stop.abort() });
    return { ok: true };
  } catch (error) {
    return { ok: false, name: error.name, providerError: error instanceof m.ProviderError,
             domException: error instanceof DOMException };
  }
}"""

TEST_CONNECTION = """async ([url, options]) => {
  const m = await import("/panel_provider.mjs");
  try {
    return { ok: true, ...(await m.testConnection({ baseUrl: url, model: "unit-model", ...options })) };
  } catch (error) {
    return { ok: false, name: error.name, kind: error.kind ?? null, status: error.status ?? null,
             message: error.message, providerMessage: error.providerMessage ?? null };
  }
}"""


@pytest.fixture(scope="module")
def stub() -> Iterator[StubProvider]:
    with StubProvider(chunk_delay=0.01, drip_delay=0.1) as server:
        yield server


@pytest.fixture(scope="module")
def page(extension_context: tuple[BrowserContext, str]) -> Iterator[Page]:
    context, extension_id = extension_context
    module_page = open_module_page(context, extension_id)
    yield module_page
    module_page.close()


def stream(page: Page, stub: StubProvider, mode: str, **options: Any) -> tuple[dict[str, Any], int]:
    """Run streamChat against a stub mode; return its outcome and the request's number."""
    before = len(stub.requests)
    url = stub.url(mode) if mode else stub.base_url
    outcome = page.evaluate(STREAM, [url, options])
    assert len(stub.requests) == before + 1, "the request never reached the stub"
    assert stub.requests[before]["mode"] == mode
    return outcome, before + 1


def refused_port() -> int:
    """A local port nobody listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# ---- streamChat's time limits -------------------------------------------------------------


def test_a_provider_that_never_answers_times_out_to_first_byte(
    page: Page, stub: StubProvider
) -> None:
    outcome, number = stream(page, stub, "never", firstByteTimeoutMs=1500)
    assert outcome == {
        "ok": False,
        "name": "ProviderError",
        "kind": "timeout-first-byte",
        "message": "The provider did not answer within 1.5 s.",
        "providerError": True,
        "domException": False,
        "deltas": [],
    }
    assert stub.wait_closed(number), "the timed-out fetch was not aborted"


def test_headers_then_silence_times_out_to_first_byte(page: Page, stub: StubProvider) -> None:
    outcome, number = stream(page, stub, "stall", firstByteTimeoutMs=1500, totalTimeoutMs=60_000)
    assert (outcome["ok"], outcome["kind"], outcome["deltas"]) == (False, "timeout-first-byte", [])
    assert outcome["message"] == "The provider did not answer within 1.5 s."
    assert stub.wait_closed(number), "the timed-out fetch was not aborted"


def test_a_reply_that_never_ends_times_out_in_total(page: Page, stub: StubProvider) -> None:
    outcome, number = stream(page, stub, "drip", firstByteTimeoutMs=10_000, totalTimeoutMs=1500)
    assert (outcome["ok"], outcome["name"], outcome["kind"]) == (
        False,
        "ProviderError",
        "timeout-total",
    )
    assert outcome["message"] == "The reply took longer than 1.5 s, so it was stopped."
    # Deltas arrived first: it is the limit on the whole reply that fired, not the first byte.
    assert outcome["deltas"] and outcome["deltas"][0] == "drip "
    assert stub.wait_closed(number), "the timed-out fetch was not aborted"


def test_a_stop_is_an_abort_error_not_a_provider_error(page: Page, stub: StubProvider) -> None:
    before = len(stub.requests)
    outcome = page.evaluate(STOP_ON_FIRST_DELTA, stub.url("drip"))
    assert outcome == {
        "ok": False,
        "name": "AbortError",
        "providerError": False,
        "domException": True,
    }
    assert stub.wait_closed(before + 1), "the stopped fetch was not aborted"


def test_a_complete_reply_within_its_limits_resolves(page: Page, stub: StubProvider) -> None:
    outcome, number = stream(page, stub, "", firstByteTimeoutMs=10_000, totalTimeoutMs=30_000)
    assert outcome["ok"] is True, outcome
    assert outcome["reply"]["text"] == f"Reply {number} to: hello there"
    assert (
        outcome["reply"]["finishReason"] == "stop" and outcome["reply"]["usage"]["total_tokens"] > 0
    )
    assert outcome["deltas"][-1] == outcome["reply"]["text"]


@pytest.mark.parametrize("options", [{"firstByteTimeoutMs": 0}, {"totalTimeoutMs": 2**31}])
def test_a_limit_setTimeout_cannot_keep_is_refused_before_any_request(
    page: Page, stub: StubProvider, options: dict[str, int]
) -> None:
    before = len(stub.requests)
    outcome = page.evaluate(STREAM, [stub.base_url, options])
    assert (outcome["ok"], outcome["name"]) == (False, "RangeError")
    assert next(iter(options)) in outcome["message"]
    assert len(stub.requests) == before


def test_the_defaults_are_30_s_to_first_byte_and_10_min_in_total(page: Page) -> None:
    timeouts = page.evaluate("async () => ({...(await import('/panel_provider.mjs')).TIMEOUTS})")
    assert timeouts == {"firstByteMs": 30_000, "totalMs": 600_000, "connectionTestMs": 15_000}
    words = page.evaluate(
        "async () => { const m = await import('/panel_deadline.mjs');"
        " return [30000, 600000, 1500, 90000].map(m.formatDuration); }"
    )
    assert words == ["30 s", "10 min", "1.5 s", "90 s"]


# ---- testConnection -------------------------------------------------------------------


def test_connection_test_sends_a_chat_request_and_stops_at_the_first_event(
    page: Page, stub: StubProvider
) -> None:
    before = len(stub.requests)
    outcome = page.evaluate(TEST_CONNECTION, [stub.base_url, {"apiKey": "sk-test-1"}])
    assert outcome == {"ok": True, "model": "unit-model"}
    request = stub.requests[before]
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == "Bearer sk-test-1"
    body = request["body"]
    assert body["model"] == "unit-model" and body["stream"] is True
    assert body["messages"] == [{"role": "user", "content": "Reply with the single word OK."}]


def test_connection_test_failures_say_what_failed(page: Page, stub: StubProvider) -> None:
    port = refused_port()
    unreachable = page.evaluate(TEST_CONNECTION, [f"http://127.0.0.1:{port}/v1", {}])
    assert (unreachable["kind"], unreachable["message"]) == (
        "unreachable",
        f"Cannot reach the provider at http://127.0.0.1:{port}.",
    )
    refused = page.evaluate(TEST_CONNECTION, [stub.url("status-401"), {"apiKey": "sk-wrong"}])
    assert refused == {
        "ok": False,
        "name": "ProviderError",
        "kind": "http",
        "status": 401,
        "message": "HTTP 401: Incorrect API key provided.",
        "providerMessage": "Incorrect API key provided.",
    }
    before = len(stub.requests)
    silent = page.evaluate(TEST_CONNECTION, [stub.url("never"), {"timeoutMs": 1500}])
    assert (silent["kind"], silent["message"]) == (
        "timeout-first-byte",
        "The provider did not answer within 1.5 s.",
    )
    assert stub.wait_closed(before + 1), "the timed-out connection test was not aborted"


# ---- error bodies and replies without streaming (issue 37) ------------------------------

ERROR_FIELDS = """async ([url]) => {
  const m = await import("/panel_provider.mjs");
  try {
    await m.streamChat({ baseUrl: url, model: "unit-model",
                         messages: [{ role: "user", content: "x".repeat(400) }] });
    return { ok: true };
  } catch (error) {
    return { ok: false, kind: error.kind, status: error.status ?? null,
             providerMessage: error.providerMessage ?? null,
             code: error.code ?? null, type: error.type ?? null };
  }
}"""

COMPLETE = """async ([url, options]) => {
  const m = await import("/panel_provider.mjs");
  try {
    return { ok: true, ...(await m.completeChat({ baseUrl: url, model: "unit-model",
      messages: [{ role: "user", content: "summarize" }], ...options })) };
  } catch (error) {
    return { ok: false, name: error.name, kind: error.kind ?? null, status: error.status ?? null };
  }
}"""


def test_an_error_body_keeps_its_code_and_type(page: Page, stub: StubProvider) -> None:
    stub.overflow_above = 100
    try:
        outcome = page.evaluate(ERROR_FIELDS, [stub.base_url])
    finally:
        stub.overflow_above = None
    assert outcome["ok"] is False and outcome["kind"] == "http" and outcome["status"] == 400
    assert (outcome["code"], outcome["type"]) == (
        "context_length_exceeded",
        "invalid_request_error",
    )
    assert outcome["providerMessage"].startswith("This model's maximum context length is 8192")
    # A body without them leaves them out.
    stub.errors.append((500, {"error": {"message": "boom"}}))
    plain = page.evaluate(ERROR_FIELDS, [stub.base_url])
    assert (plain["status"], plain["code"], plain["type"]) == (500, None, None)


def test_complete_chat_asks_without_streaming(page: Page, stub: StubProvider) -> None:
    before = len(stub.summary_calls())
    outcome = page.evaluate(COMPLETE, [stub.base_url, {"apiKey": "sk-unit"}])
    assert outcome["ok"] is True, outcome
    assert outcome["text"].startswith("Summary ") and outcome["model"] == "unit-model"
    calls = stub.summary_calls()
    assert len(calls) == before + 1 and calls[-1]["body"]["stream"] is False
    stub.summary_fails = True
    try:
        failed = page.evaluate(COMPLETE, [stub.base_url, {}])
    finally:
        stub.summary_fails = False
    assert (failed["ok"], failed["name"], failed["kind"], failed["status"]) == (
        False,
        "ProviderError",
        "http",
        500,
    )
