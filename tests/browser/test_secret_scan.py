"""A planted API key never appears anywhere, end to end in the real extension.

``test_credentials.py`` plants a key through ``credential.set`` and scans IndexedDB,
the settings keys of ``chrome.storage.local``, some queries and the page's console.
This test goes further, the way a user would: the key is typed into the side panel's
Settings form, a message is sent with it to the stub provider, a run is started with a
RunEnvironmentSnapshot pointing at its credential reference and recovered, and the
debugging console's helpers are run. Then it scans, for the key in plain, lower-case,
hex, URL-encoded, JSON-escaped and base64/base64url (every alignment) forms:

* every store of every IndexedDB database of the origin (``panelot_v1``,
  ``panelot_keys`` and any other), Blobs and bytes included;
* *all* of ``chrome.storage.local`` (``get(null)``, issued by the test, never the app);
* the JSON and Markdown exports, the UI snapshot, receipts, the run record, its
  snapshot and the recovered snapshot;
* everything the console printed for its default helpers;
* every console message and page error of the panel, the console page and the
  extension's service worker.
"""

from __future__ import annotations

import json
import urllib.parse
from typing import Any

from playwright.sync_api import BrowserContext, ConsoleMessage

from browser_harness import READY_TIMEOUT_MS, query
from leak_scan import DUMP_IDB, secret_forms
from panelot.testing import (
    PageStore,
    StubProvider,
    configure_provider,
    new_thread,
    open_panel,
    send_message,
)

SECRET = "sk-live-SCAN-7f3e9b2a4c6d8e0f1a2b-QRST"


def _assert_absent(where: str, text: str) -> None:
    for form in [*secret_forms(SECRET), urllib.parse.quote(SECRET, safe="")]:
        assert form not in text and form.lower() not in text.lower(), f"{where} holds {form!r}"


CONSOLE_HELPERS = [
    "threads()",
    "settings()",
    "receipts(None, 200)",
    "describe()",
]


def test_a_typed_key_is_nowhere_in_any_form(extension_context: tuple[BrowserContext, str]) -> None:
    context, extension_id = extension_context
    logs: list[str] = []

    def log(msg: ConsoleMessage) -> None:
        logs.append(f"{msg.type}: {msg.text}")

    context.on("console", log)  # pages and the service worker alike
    with StubProvider() as stub:
        panel = open_panel(context, extension_id)
        panel.on("pageerror", lambda exc: logs.append(f"pageerror: {exc}"))
        configure_provider(panel, stub.base_url, key=SECRET)
        thread_id = new_thread(panel)
        send_message(panel, "Is the key safe?")  # a real request to the stub, with the key

        providers = query(panel, "settings.get", {"group": "providers"})["value"]
        ref = providers["connections"][0]["credentialRef"]
        assert ref and ref.startswith("cred:")
        snapshot = {
            "connection": {
                "id": "conn-scan",
                "providerKind": "openai",
                "baseUrl": stub.base_url,
                "credentialRef": ref,
            },
            "model": "stub-model",
            "parameters": {"temperature": 0.5},
            "systemPrompt": "Be brief.",
            "skills": [],
            "toolSchemas": [],
            "executionBindings": {},
            "permissionPolicy": {"mode": "ask"},
            "submissionContext": {"origin": "https://example.com"},
            "capabilities": {},
        }
        run = PageStore(panel, client_id="scan").send(
            "run.start", {"threadId": thread_id, "input": "go", "snapshot": snapshot}
        )
        bindings = {"connection": dict(snapshot["connection"]), "executionBindings": {}}
        outputs: list[Any] = [
            query(panel, "thread.export", {"threadId": thread_id}),
            query(panel, "thread.export", {"threadId": thread_id, "format": "markdown"}),
            query(panel, "thread.snapshot", {"threadId": thread_id}),
            query(panel, "thread.context", {"threadId": thread_id}),
            query(panel, "receipts.list", {"limit": 500}),
            query(panel, "run.get", {"runId": run["runId"]}),
            query(panel, "run.recover", {"runId": run["runId"], "bindings": bindings}),
            query(panel, "settings.all"),
            query(panel, "credential.list"),
            query(panel, "credential.status", {"ref": ref}),
        ]
        assert outputs[5]["snapshot"]["connection"]["credentialRef"] == ref

        console = context.new_page()
        console.on("pageerror", lambda exc: logs.append(f"pageerror: {exc}"))
        console.goto(f"chrome-extension://{extension_id}/console.html")
        console.wait_for_function(
            "() => document.body.dataset.ready === '1'", timeout=READY_TIMEOUT_MS
        )
        for source in [
            *CONSOLE_HELPERS,
            f"tree({thread_id!r})",
            f"context({thread_id!r})",
            f"check({thread_id!r})",
            f"export({thread_id!r})",
            f"export({thread_id!r}, 'markdown')",
        ]:
            console.evaluate("(s) => window.panelotConsole.run(s)", source)
        printed = console.inner_text("#output")
        assert thread_id in printed and ref in printed  # the helpers did print their views

        databases = panel.evaluate(DUMP_IDB)
        storage = panel.evaluate("() => chrome.storage.local.get(null)")
        assert ref in storage  # the credential record is there, encrypted
        assert "panelot_keys/keys" in databases and "panelot_v1/runs" in databases
        assert any(ref in row for row in databases["panelot_v1/runs"])
        console.close()
        panel.close()
    context.remove_listener("console", log)

    _assert_absent("IndexedDB", json.dumps(databases))
    _assert_absent("chrome.storage.local", json.dumps(storage))
    _assert_absent("exports, snapshots and queries", json.dumps(outputs))
    _assert_absent("console output", printed)
    _assert_absent("console and service-worker logs", "\n".join(logs))


def test_the_scan_sees_each_encoded_form() -> None:
    """Control: the scan fails on the key hidden in any of the forms it looks for."""
    import base64

    hidden = [
        SECRET,
        SECRET.upper(),
        SECRET.encode().hex(),
        urllib.parse.quote(SECRET, safe=""),
        json.dumps({"k": SECRET})[6:],
        *(base64.b64encode(b"\0" * n + SECRET.encode()).decode() for n in range(3)),
        base64.urlsafe_b64encode(SECRET.encode()).decode(),
    ]
    for text in hidden:
        try:
            _assert_absent("control", f"prefix {text} suffix")
        except AssertionError:
            continue
        raise AssertionError(f"the scan missed {text!r}")
