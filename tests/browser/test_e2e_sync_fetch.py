"""End-to-end: an attachment only the sync server holds, shown in the panel and loaded.

The real extension against the open test server (tests/support/couch_server.cjs): a
message in the panel carries a file (its name holds markup) and an image, the store pushes them, then
evicts its bytes here (eviction is local: the server keeps them). The open
conversation shows the file as "… — on the sync server, Load" (as text: the markup is
inert); Load runs ``sync.fetch`` and the file's chip comes back (the image is drawn again), with the same bytes as
``attachment.get`` reads them, and a push then sends nothing. Tool-result details
stored as an attachment and evicted show the same offer; Load fetches them and shows
the details as text (the result kept open though its node is redrawn).
"""

from __future__ import annotations

import base64
import json
import urllib.request
import uuid
from typing import Any

from playwright.sync_api import Page

from behavior.sync import OPEN_ENV
from browser_harness import query
from e2e_support import show_thread, tiny_png, wait_query
from panelot.testing import new_thread

SEND = """async ([type, payload]) => {
  const out = await window.panelot.send({ type, clientId: "e2e",
    submissionId: crypto.randomUUID(), payload });
  if (out.status !== "completed") throw new Error(JSON.stringify(out.error));
  return out.response;
}"""

NAME = "<b>bold</b><img src=x onerror=window.__pwned=1>.txt"
DATA = bytes(range(256)) * 12
INJECTED = "#messages .attachments b, #messages .attachments img:not([data-attachment-id])"
"""What the file's name would make if it were drawn as markup."""


def _send(page: Page, kind: str, payload: dict[str, Any]) -> Any:
    return page.evaluate(SEND, [kind, payload])


def _new_database(server: str) -> str:
    name = f"panelot-e2e-{uuid.uuid4().hex[:10]}"
    request = urllib.request.Request(f"{server}/{name}", method="PUT")  # noqa: S310
    with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - loopback
        assert response.status in (201, 202), response.status
    return name


def _doc(server: str, database: str, doc_id: str) -> Any:
    with urllib.request.urlopen(f"{server}/{database}/{doc_id}", timeout=30) as response:  # noqa: S310
        return json.loads(response.read())


def test_a_file_only_on_the_sync_server_shows_load_and_load_brings_it(
    panel: Page, couch_servers: dict[str, str]
) -> None:
    server = couch_servers[OPEN_ENV]
    database = _new_database(server)
    thread_id = new_thread(panel)
    put = {"threadId": thread_id, "kind": "file", "mime": "text/plain"}
    aid = _send(panel, "attachment.put", {**put, "dataBase64": base64.b64encode(DATA).decode()})[
        "attachmentId"
    ]
    png = tiny_png()
    image = {"threadId": thread_id, "kind": "image", "mime": "image/png"}
    iid = _send(panel, "attachment.put", {**image, "dataBase64": base64.b64encode(png).decode()})[
        "attachmentId"
    ]
    block = {"type": "file", "attachmentId": aid, "name": NAME, "size": len(DATA)}
    picture = {"type": "image", "attachmentId": iid, "name": "square.png"}
    content = [{"type": "text", "text": "the notes"}, block, picture]
    _send(
        panel,
        "message.append",
        {"threadId": thread_id, "type": "user_message", "payload": {"content": content}},
    )
    _send(panel, "sync.configure", {"server": server, "database": database})
    assert _send(panel, "sync.push", {})["pushed"] >= 4
    _send(panel, "attachment.evict", {"budget": 0})  # local: the server keeps it
    wait_query(panel, "sync.attachment", {"attachmentId": aid}, lambda w: w["onServer"])
    show_thread(panel, thread_id)

    offer = f'.on-server[data-attachment-id="{aid}"]'
    panel.wait_for_selector(f'{offer} button[data-action="fetch-attachment"]')
    shown = panel.inner_text(offer)
    assert shown.startswith(f"{NAME} (3") and shown.endswith(" — on the sync server, Load"), shown
    assert panel.query_selector(INJECTED) is None
    assert panel.evaluate("() => window.__pwned") is None

    panel.click(f'{offer} button[data-action="fetch-attachment"]')
    chip = panel.wait_for_selector(f'#messages .file-chip[data-attachment-id="{aid}"]')
    assert chip is not None and NAME in chip.inner_text()
    assert panel.query_selector(offer) is None
    got = query(panel, "attachment.get", {"attachmentId": aid})
    assert base64.b64decode(got["dataBase64"]) == DATA  # the same bytes
    where = query(panel, "sync.attachment", {"attachmentId": aid})
    assert where == {"attachmentId": aid, "held": True, "onServer": False}, where
    # The image the same way: Load, then it is drawn from its bytes.
    image_offer = f'.on-server[data-attachment-id="{iid}"]'
    panel.click(f'{image_offer} button[data-action="fetch-attachment"]')
    panel.wait_for_function(
        "(id) => document.querySelector(`#messages img[data-attachment-id='${id}']`)"
        "?.src.startsWith('blob:')",
        arg=iid,
    )
    assert query(panel, "sync.attachment", {"attachmentId": iid})["held"] is True
    assert _send(panel, "sync.push", {})["pushed"] == 0  # nothing goes back
    doc = _doc(server, database, f"attachments:{aid}")
    assert "_deleted" not in doc and doc["_rev"].startswith("1-"), doc
    assert panel.query_selector(INJECTED) is None


MARKER = "<img src=x onerror=\"window.__pwned='details'\"> needle-51c2"


def test_evicted_tool_result_details_load_from_the_sync_server_as_text(
    panel: Page, couch_servers: dict[str, str]
) -> None:
    server = couch_servers[OPEN_ENV]
    database = _new_database(server)
    thread_id = new_thread(panel)
    details = {"marker": MARKER, "rows": [{"i": i, "text": "x" * 60} for i in range(600)]}
    user = _send(
        panel,
        "message.append",
        {
            "threadId": thread_id,
            "type": "user_message",
            "payload": {"content": [{"type": "text", "text": "Read the page"}]},
        },
    )
    call = {"itemId": "call-1", "toolName": "read_page", "params": {}, "level": "builtin"}
    _send(
        panel,
        "message.append",
        {"threadId": thread_id, "type": "tool_call", "parentId": user["nodeId"], "payload": call},
    )
    result = {
        "itemId": "call-1",
        "ok": True,
        "contentForLlm": [{"type": "text", "text": "read 600 rows"}],
        "details": details,
    }
    node_id = _send(
        panel,
        "message.append",
        {"threadId": thread_id, "type": "tool_result", "payload": result},
    )["nodeId"]
    ref = query(panel, "thread.snapshot", {"threadId": thread_id})["nodes"][-1]["payload"][
        "details"
    ]
    assert ref["storedAs"] == "attachment", ref
    _send(panel, "sync.configure", {"server": server, "database": database})
    _send(panel, "sync.push", {})
    _send(panel, "attachment.evict", {"budget": 0})
    wait_query(
        panel, "sync.attachment", {"attachmentId": ref["attachmentId"]}, lambda w: w["onServer"]
    )
    show_thread(panel, thread_id)

    tool = panel.locator(f".msg.tool.result[data-node-id='{node_id}']")
    tool.locator("summary").click()
    offer = f".msg[data-node-id='{node_id}'] .tool-details .on-server"
    panel.wait_for_selector(f"{offer} button[data-action='fetch-attachment']")
    assert "— on the sync server, Load" in panel.inner_text(offer)
    panel.click(f"{offer} button[data-action='fetch-attachment']")
    loaded = f".msg[data-node-id='{node_id}'] .tool-details[data-state=loaded]"
    panel.wait_for_selector(loaded)
    shown = panel.inner_text(loaded)
    assert json.dumps(MARKER) in shown, shown[:200]  # the JSON, as text
    assert panel.query_selector(f"{loaded} img") is None
    assert panel.evaluate("() => window.__pwned") is None
    assert _send(panel, "sync.push", {})["pushed"] == 0
