"""Credentials on a real extension: AES-GCM under a non-extractable key, nothing in clear."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Page

from browser_harness import query, run_py
from extension_pages import envelope, open_page, storage_remove
from leak_scan import DUMP_IDB, secret_forms

SECRET = "sk-ant-PLANTED-9d8c7b6a5f4e3d2c1b0a-ZYXW"
ROTATED = "sk-ant-ROTATED-1122334455667788-abcd"
REF = "cred:anthropic-main"

#: Tries to export the stored credential key (must fail: it is non-extractable).
EXPORT_KEY = """async () => {
  const db = await new Promise((res) => { const r = indexedDB.open("panelot_keys"); r.onsuccess = () => res(r.result); });
  const key = await new Promise((res) => {
    const r = db.transaction("keys").objectStore("keys").get("credentials-aes-gcm-v1");
    r.onsuccess = () => res(r.result);
  });
  db.close();
  try {
    await crypto.subtle.exportKey("raw", key);
    return { exported: true };
  } catch (error) {
    return { exported: false, error: error.name, extractable: key.extractable, type: key.type };
  }
}"""


def assert_absent(secret: str, where: str, text: str) -> None:
    """Fail if ``text`` holds the secret in any form."""
    for form in secret_forms(secret):
        assert form not in text and form.lower() not in text.lower(), f"{where} holds {form!r}"


@pytest.fixture
def panel(extension_context: tuple[BrowserContext, str]) -> Iterator[Page]:
    context, extension_id = extension_context
    page = open_page(context, extension_id)
    logs: list[str] = []
    page.on("console", lambda msg: logs.append(msg.text))
    page.logs = logs  # type: ignore[attr-defined]
    yield page
    envelope(page, "credential.delete", {"ref": REF})
    storage_remove(page, ["credentials.index", REF])
    page.close()


def test_planted_secret_is_nowhere_in_clear(panel: Page) -> None:
    out = envelope(panel, "credential.set", {"secret": SECRET, "ref": REF}, "plant-1")
    assert out == {"status": "completed", "response": {"ref": REF}}
    assert envelope(panel, "credential.set", {"secret": SECRET, "ref": REF}, "plant-1") == out
    providers = {
        "connections": [
            {
                "id": "a",
                "kind": "anthropic",
                "baseUrl": "https://api.anthropic.test",
                "models": ["c"],
                "credentialRef": REF,
            }
        ]
    }
    assert (
        envelope(panel, "settings.set", {"group": "providers", "value": providers})["status"]
        == "completed"
    )
    thread = envelope(panel, "thread.create", {"title": "uses " + REF})["response"]["threadId"]
    envelope(
        panel,
        "message.append",
        {
            "threadId": thread,
            "type": "user_message",
            "payload": {"content": [{"type": "text", "text": "hi"}]},
        },
    )

    record = panel.evaluate("(k) => chrome.storage.local.get([k])", REF)[REF]
    assert record["alg"] == "AES-GCM" and record["keyId"] == "credentials-aes-gcm-v1"
    assert len(base64.b64decode(record["iv"])) == 12
    assert len(base64.b64decode(record["data"])) == len(SECRET.encode()) + 16  # GCM tag

    keys = ["settings.providers", "settings.permissions", "settings.ui", "credentials.index", REF]
    stored = panel.evaluate("(keys) => chrome.storage.local.get(keys)", keys)
    assert set(stored) == {"settings.providers", "credentials.index", REF}
    assert_absent(SECRET, "chrome.storage.local", json.dumps(stored))
    databases = panel.evaluate(DUMP_IDB)
    assert "panelot_keys/keys" in databases and "panelot_v1/commandReceipts" in databases
    assert_absent(SECRET, "IndexedDB", json.dumps(databases))
    exports = [
        query(panel, "thread.export", {"threadId": thread}),
        query(panel, "thread.export", {"threadId": thread, "format": "markdown"}),
        query(panel, "thread.snapshot", {"threadId": thread}),
        query(panel, "receipts.list", {"clientId": "test", "limit": 500}),
        query(panel, "settings.all"),
        query(panel, "credential.list"),
        query(panel, "credential.status", {"ref": REF}),
    ]
    assert_absent(SECRET, "exports and queries", json.dumps(exports))
    # The whole-database backup carries the credential's reference, never its value.
    backup = panel.evaluate("async () => (await window.panelot.backup.export()).file.text()")
    section = json.loads(backup)["panelotSettings"]
    assert [c["ref"] for c in section["credentials"]] == [REF], section["credentials"]
    assert section["groups"]["providers"]["value"]["connections"][0]["credentialRef"] == REF
    assert record["data"] not in backup and record["iv"] not in backup
    assert_absent(SECRET, "the backup file", backup)
    assert_absent(SECRET, "console", "\n".join(panel.logs))  # type: ignore[attr-defined]
    # ... yet it decrypts on demand
    assert (
        run_py(
            panel,
            f"import json\nfrom panelot.runtime import store\njson.dumps(await store().services.credentials.reveal({REF!r}))",
        )
        == SECRET
    )


def test_key_is_non_extractable_and_rotation_keeps_the_reference(panel: Page) -> None:
    assert (
        envelope(panel, "credential.set", {"secret": SECRET, "ref": REF})["status"] == "completed"
    )
    info = run_py(
        panel,
        "import json\nfrom panelot.runtime import store\n"
        "json.dumps(await store().services.credentials.keystore.key_info())",
    )
    assert info == {
        "keyId": "credentials-aes-gcm-v1",
        "extractable": False,
        "algorithm": "AES-GCM",
        "usages": ["encrypt", "decrypt"],
    }
    exported = panel.evaluate(EXPORT_KEY)
    assert exported == {
        "exported": False,
        "error": "InvalidAccessError",
        "extractable": False,
        "type": "secret",
    }

    before = query(panel, "credential.status", {"ref": REF})
    first = panel.evaluate("(k) => chrome.storage.local.get([k])", REF)[REF]
    assert envelope(panel, "credential.rotate", {"ref": REF, "secret": ROTATED})["response"] == {
        "ref": REF
    }
    after = panel.evaluate("(k) => chrome.storage.local.get([k])", REF)[REF]
    assert after["data"] != first["data"] and after["iv"] != first["iv"]
    assert (
        after["createdAt"] == first["createdAt"]
        and query(panel, "credential.status", {"ref": REF})["exists"]
    )
    assert before["ref"] == REF
    reveal = f"import json\nfrom panelot.runtime import store\njson.dumps(await store().services.credentials.reveal({REF!r}))"
    assert run_py(panel, reveal) == ROTATED
    assert_absent(ROTATED, "chrome.storage.local", json.dumps(after))
    # a fresh page (a new context) decrypts with the same stored key
    page2 = panel.context.new_page()
    page2.goto(panel.url)
    from browser_harness import wait_ready

    wait_ready(page2)
    try:
        assert run_py(page2, reveal) == ROTATED
    finally:
        page2.close()
    # tampering is detected (AES-GCM authenticates), and the error names no secret
    tampered: dict[str, Any] = {**after, "data": base64.b64encode(b"\0" * 40).decode()}
    panel.evaluate("(items) => chrome.storage.local.set(items)", {REF: tampered})
    err = run_py(
        panel,
        f"import json\nfrom panelot.runtime import store\n"
        f"try:\n    await store().services.credentials.reveal({REF!r})\n    r = 'decrypted'\n"
        f"except Exception as e:\n    r = type(e).__name__ + ': ' + str(e)\njson.dumps(r)",
    )
    assert err.startswith("CredentialError") and ROTATED not in err
