"""The pytest plugin (panelot.testing) itself, on the built extension.

One profile for the module (``panelot_module_context``) keeps it quick; the fixtures of
fresh profiles (``panelot_panel``, ``panelot_store``, ``panelot_second_panel``) are used by
the tests that need them. What the handle reads as stored is checked against
``raw(table)``, which reads IndexedDB itself.
"""

from __future__ import annotations

import base64

import pytest
from playwright.sync_api import Page

from panelot.testing import (
    BootError,
    ExtensionContext,
    PageStore,
    StoreError,
    error_class,
    raw_bytes,
)

HOSTILE = "quote ' double \" backtick ` ${x} </script><script>window.__pwned=1</script> \\ \u2028 é"


@pytest.fixture(scope="module")
def store(panelot_module_panel: Page) -> PageStore:
    return PageStore(panelot_module_panel)


def test_a_hostile_payload_round_trips_unchanged(store: PageStore) -> None:
    seeded = store.seed_thread(HOSTILE, title=HOSTILE)
    thread = store.query("thread.get", {"threadId": seeded.thread_id})
    assert thread["title"] == HOSTILE
    nodes = store.raw_nodes(seeded.thread_id)
    assert nodes[0]["payload"]["content"][0]["text"] == HOSTILE
    assert nodes[1]["payload"]["content"][0]["text"] == f"About {HOSTILE}"
    assert store.page.evaluate("() => window.__pwned") is None


def test_domain_errors_are_raised_by_name_with_their_field(store: PageStore) -> None:
    with pytest.raises(error_class("NotFoundError")) as raised:
        store.send("message.append", {"threadId": "nope", "type": "user_message", "payload": {}})
    assert isinstance(raised.value, StoreError)
    assert (raised.value.name, raised.value.field) == ("NotFoundError", "payload.threadId")
    assert "thread 'nope' does not exist" in raised.value.message
    with pytest.raises(error_class("ValidationError")):
        store.send("thread.create", {"title": 42})
    with pytest.raises(StoreError) as unknown:
        store.query("no.such.query")
    assert unknown.value.name == "UnknownCommandError"
    assert "no.such.query" in str(unknown.value)


def test_receipts_and_nodes_are_waited_for_in_indexeddb(store: PageStore) -> None:
    created = store.send("thread.create", {"title": "receipt"}, submission_id="sub-plugin-1")
    receipt = store.wait_for_receipt("sub-plugin-1", client_id=store.client_id)
    assert receipt["commandType"] == "thread.create"
    assert receipt["response"] == created
    with pytest.raises(AssertionError, match="no receipt of submission 'never-sent'"):
        store.wait_for_receipt("never-sent", timeout_s=0.2)
    with pytest.raises(AssertionError, match="no stored node of thread"):
        store.wait_for_node(lambda n: False, created["threadId"], timeout_s=0.2)


def test_live_yields_the_result_now_and_after_each_change(store: PageStore) -> None:
    seeded = store.seed_thread("first")
    with store.live("thread.snapshot", {"threadId": seeded.thread_id}) as live:
        assert len(next(live)["nodes"]) == 2
        store.seed_turn(seeded, "second")
        assert live.until(lambda snap: len(snap["nodes"]) == 4)
    with store.live("thread.get", {"threadId": "nope"}) as missing, pytest.raises(StoreError):
        next(missing)


def test_seeded_branches_and_attachments_are_stored(store: PageStore) -> None:
    seeded = store.seed_thread("branch me")
    user_id = seeded.user_ids[0]
    others = store.seed_branches(seeded.thread_id, user_id, "v2", "v3")
    assert len(store.query("thread.siblings", {"nodeId": others[0]})) == 3
    data = bytes(range(256)) * 4
    attachment_id = store.seed_attachment(seeded.thread_id, data, name="bytes.png")
    row = next(r for r in store.raw("attachments") if r["id"] == attachment_id)
    stored = next(v for v in row.values() if isinstance(v, dict) and {"$blob", "$bytes"} & set(v))
    assert raw_bytes(stored) == data
    assert (
        base64.b64decode(
            store.query("attachment.get", {"attachmentId": attachment_id})["dataBase64"]
        )
        == data
    )


def test_a_second_panel_sees_the_first_ones_writes(
    panelot_store: PageStore, panelot_second_panel: Page
) -> None:
    seeded = panelot_store.seed_thread("shared", title="from panel one")
    other = PageStore(panelot_second_panel)
    assert other.query("thread.get", {"threadId": seeded.thread_id})["title"] == "from panel one"
    assert [t["id"] for t in other.raw("threads")] == [seeded.thread_id]


def test_a_failed_boot_is_reported_with_its_error(panelot_module_context: ExtensionContext) -> None:
    context = panelot_module_context.context
    patterns = ["**/snapshot/manifest.json", "**/wheels/manifest.json"]
    for pattern in patterns:
        context.route(pattern, lambda route: route.fulfill(status=404, body="gone"))
    try:
        with pytest.raises(BootError, match="failed to boot: .+"):
            panelot_module_context.open_panel()
    finally:
        for pattern in patterns:
            context.unroute(pattern)
        for page in context.pages:
            if (
                "sidepanel.html" in page.url
                and page.evaluate("() => window.__panelotState") == "error"
            ):
                page.close()
